# Sourced by bench/history-aa.sh, bench/bisect-demo.sh and
# bench/external-nopid-check.sh: the recipe of an `external` nginx that the
# run starts and stops from DIR/nginx.conf (or, without pid, one started by
# hand), on 127.0.0.1:PORT; one point (4 connections), three trials of 1 s.
# shellcheck shell=bash

# usage: external_nginx_recipe NAME DIR PORT [START_PREFIX] > recipe.toml
# START_PREFIX goes before `nginx` in the start command (e.g. `taskset -c 1`).
external_nginx_recipe() {
    local name=$1 dir=$2 port=$3 prefix=${4:-}
    cat <<RECIPE
name = "$name"
[server]
kind = "external"
url = "http://127.0.0.1:$port/"
start = '${prefix:+$prefix }nginx -p $dir -c $dir/nginx.conf -e $dir/error.log'
stop = 'p=\$(cat $dir/nginx.pid); kill \$p; while kill -0 \$p 2>/dev/null; do sleep 0.05; done'
pid_command = 'cat $dir/nginx.pid'
[load]
kind = "http"
[sweep]
connections = [4]
[trials]
duration = "1s"
warmup = "200ms"
min = 3
max = 3
RECIPE
}

# usage: external_nginx_recipe_without_pid NAME PORT > recipe.toml
# An nginx started by hand: no start, stop, pid or pid_command; scalelab
# finds it by the process listening on PORT.
external_nginx_recipe_without_pid() {
    local name=$1 port=$2
    cat <<RECIPE
name = "$name"
[server]
kind = "external"
url = "http://127.0.0.1:$port/"
[load]
kind = "http"
[sweep]
connections = [4]
[trials]
duration = "1s"
warmup = "200ms"
min = 3
max = 3
RECIPE
}

# usage: external_nginx_conf DIR PORT [HTTP_LINES] [LOCATION_LINES]
# Writes DIR/nginx.conf: one worker serving DIR/www on 127.0.0.1:PORT,
# with HTTP_LINES in its http block and LOCATION_LINES in its location.
external_nginx_conf() {
    local dir=$1 port=$2 http=${3:-} location=${4:-}
    mkdir -p "$dir/www" && echo ok > "$dir/www/index.html"
    cat > "$dir/nginx.conf" <<CONF
user root;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 256; }
http { access_log off; $http
  server { listen 127.0.0.1:$port;
    location / { root $dir/www; $location } } }
CONF
}
