/* The least an epoll HTTP/1.1 client can do per request, to bound what any
 * client built like wrk or scalelab can reach (bench/http-vs-wrk.sh FLOOR=1).
 *
 * It keeps CONNS connections busy for SECONDS against one loopback URL and
 * does nothing a real load generator must: no latency clock, no histogram,
 * no parsing. Each response is taken to be exactly as long as the first
 * one (measured once at start; fine for nginx's `return 200 "{}"`, whose
 * Date header has a fixed width). Level-triggered epoll, each socket added
 * once: per request one send and one recv (keepalive), or socket, connect,
 * send, epoll_ctl, recv to EOF and close (close, where the server closes
 * first after `Connection: close`).
 *
 * Usage: floor-client HOST PORT PATH CONNS SECONDS keepalive|close
 * Prints: "requests N seconds S".  Build: cc -O2 -o floor-client floor-client.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_in addr;
static char req[512];
static size_t req_len;

static void die(const char *what) {
    perror(what);
    exit(1);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int dial(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket");
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
    return fd;
}

static void send_req(int fd) {
    if (send(fd, req, req_len, MSG_DONTWAIT) != (ssize_t)req_len) die("send");
}

/* The length of one whole response: headers, then Content-Length bytes. */
static size_t response_len(void) {
    char buf[8192];
    size_t have = 0;
    int fd = dial();
    send_req(fd);
    for (;;) {
        ssize_t r = recv(fd, buf + have, sizeof buf - 1 - have, 0);
        if (r <= 0) die("first response");
        have += r;
        buf[have] = 0;
        char *end = strstr(buf, "\r\n\r\n");
        char *cl = strcasestr(buf, "\r\ncontent-length:");
        if (end && cl) {
            size_t len = (end + 4 - buf) + strtoul(cl + 17, NULL, 10);
            if (have >= len) {
                close(fd);
                return len;
            }
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s HOST PORT PATH CONNS SECONDS keepalive|close\n", argv[0]);
        return 2;
    }
    int conns = atoi(argv[4]);
    double secs = atof(argv[5]);
    int close_mode = strcmp(argv[6], "close") == 0;
    addr.sin_family = AF_INET;
    addr.sin_port = htons(atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) die("host");
    req_len = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s:%s\r\n%s\r\n", argv[3],
                       argv[1], argv[2], close_mode ? "Connection: close\r\n" : "");
    size_t resp = close_mode ? 0 : response_len();

    int ep = epoll_create1(0);
    size_t *got = calloc(65536, sizeof *got);
    static char buf[65536];
    struct epoll_event ev = {.events = EPOLLIN}, evs[256];
    for (int i = 0; i < conns; i++) {
        int fd = dial();
        if (!close_mode) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
        ev.data.fd = fd;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
        send_req(fd);
    }
    unsigned long done = 0;
    double start = now(), end = start + secs;
    while (now() < end) {
        int n = epoll_wait(ep, evs, 256, 100);
        for (int k = 0; k < n; k++) {
            int fd = evs[k].data.fd;
            ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            /* The server's FIN nearly always follows its response at once. */
            while (close_mode && r > 0) r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (r < 0 && errno == EAGAIN) continue;
            if (close_mode) {
                if (r < 0) die("recv");
                close(fd);
                done++;
                fd = dial();
                ev.data.fd = fd;
                send_req(fd);
                if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
                continue;
            }
            if (r <= 0) die("recv (keepalive)");
            got[fd] += r;
            if (got[fd] >= resp) {
                got[fd] -= resp;
                done++;
                send_req(fd);
            }
        }
    }
    printf("requests %lu seconds %.3f\n", done, now() - start);
    return 0;
}
