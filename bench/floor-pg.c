/* The least a PostgreSQL client can do per select-only transaction, to bound
 * what any client built like pgbench or scalelab can reach
 * (bench/pg-vs-pgbench.sh FLOOR=1).
 *
 * CONNS connections on one thread, level-triggered epoll, trust auth as
 * user postgres. Each prepares pgbench's select-only statement once, then
 * runs it in a loop as pgbench -M prepared does (Bind, Execute, Sync in one
 * send; one recv per reply, which ends at ReadyForQuery), for SECONDS. It
 * does nothing a real load generator must: no latency clock, no histogram,
 * no check of the rows; only an ErrorResponse stops it.
 *
 * Usage: floor-pg PORT CONNS SECONDS SCALE
 * Prints: "transactions N seconds S".  Build: cc -O2 -o floor-pg floor-pg.c
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 1024

struct conn {
    int fd;
    size_t have; /* bytes of an unfinished message kept in buf */
    char buf[8192];
};

static void die(const char *what) {
    fprintf(stderr, "floor-pg: %s\n", what);
    exit(1);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static char *put32(char *p, uint32_t v) {
    v = htonl(v);
    memcpy(p, &v, 4);
    return p + 4;
}

static char *put16(char *p, uint16_t v) {
    v = htons(v);
    memcpy(p, &v, 2);
    return p + 2;
}

/* A message: type byte, then its length, then body (len bytes). */
static char *msg(char *p, char type, const void *body, size_t len) {
    *p++ = type;
    p = put32(p, len + 4);
    memcpy(p, body, len);
    return p + len;
}

/* Reads whole messages into c->buf until ReadyForQuery; returns 1 when one
 * ended, 0 when more is needed (nonblocking), and dies on an error. */
static int consume(struct conn *c, int blocking) {
    for (;;) {
        ssize_t r = recv(c->fd, c->buf + c->have, sizeof c->buf - c->have,
                         blocking ? 0 : MSG_DONTWAIT);
        if (r <= 0) return r < 0 && !blocking ? 0 : (die("recv"), 0);
        c->have += r;
        size_t off = 0;
        int ready = 0;
        while (c->have - off >= 5) {
            uint32_t len;
            memcpy(&len, c->buf + off + 1, 4);
            len = ntohl(len);
            if (c->have - off < len + 1) break;
            char type = c->buf[off];
            if (type == 'E') die("ErrorResponse");
            if (type == 'Z') ready = 1;
            off += len + 1;
        }
        memmove(c->buf, c->buf + off, c->have - off);
        c->have -= off;
        if (ready) return 1;
    }
}

static void send_all(int fd, const char *p, size_t n) {
    if (send(fd, p, n, 0) != (ssize_t)n) die("send");
}

static void start(struct conn *c, int port) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect");
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
    char out[512], *p = out + 4;
    p = put32(p, 196608); /* protocol 3.0 */
    memcpy(p, "user\0postgres\0database\0postgres\0", 32);
    p += 32;
    *p++ = 0;
    put32(out, p - out);
    send_all(c->fd, out, p - out);
    consume(c, 1); /* AuthenticationOk .. ReadyForQuery (trust) */
    static const char sql[] = "SELECT abalance FROM pgbench_accounts WHERE aid = $1;";
    char body[256], *b = body;
    *b++ = 's';
    *b++ = 0;
    memcpy(b, sql, sizeof sql);
    b += sizeof sql;
    b = put16(b, 1);
    b = put32(b, 23); /* int4 */
    p = msg(out, 'P', body, b - body);
    p = msg(p, 'S', "", 0);
    send_all(c->fd, out, p - out);
    consume(c, 1);
}

/* Bind (unnamed portal, statement s, one text parameter), Execute, Sync. */
static void query(struct conn *c, long accounts) {
    char digits[24], body[64], out[128], *b = body;
    int n = snprintf(digits, sizeof digits, "%ld", 1 + random() % accounts);
    *b++ = 0;
    *b++ = 's';
    *b++ = 0;
    b = put16(b, 0);
    b = put16(b, 1);
    b = put32(b, n);
    memcpy(b, digits, n);
    b += n;
    b = put16(b, 0);
    char *p = msg(out, 'B', body, b - body);
    p = msg(p, 'E', "\0\0\0\0\0", 5);
    p = msg(p, 'S', "", 0);
    send_all(c->fd, out, p - out);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s PORT CONNS SECONDS SCALE\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]), conns = atoi(argv[2]);
    double secs = atof(argv[3]);
    long accounts = 100000L * atol(argv[4]);
    if (conns < 1 || conns > MAX_CONNS) die("CONNS: 1..1024");
    static struct conn cs[MAX_CONNS];
    int ep = epoll_create1(0);
    for (int i = 0; i < conns; i++) {
        start(&cs[i], port);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev) < 0) die("epoll_ctl");
    }
    for (int i = 0; i < conns; i++) query(&cs[i], accounts);
    unsigned long done = 0;
    double t0 = now(), end = t0 + secs;
    struct epoll_event evs[256];
    while (now() < end) {
        int n = epoll_wait(ep, evs, 256, 100);
        for (int k = 0; k < n; k++) {
            struct conn *c = &cs[evs[k].data.u32];
            if (consume(c, 0)) {
                done++;
                query(c, accounts);
            }
        }
    }
    printf("transactions %lu seconds %.3f\n", done, now() - t0);
    return 0;
}
