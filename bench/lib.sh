# Shared by bench/run.sh and bench/h2.sh (sourced): logging, package installs, and stopping
# only the nginx this harness started (its pid file under $OUT).

log() { printf '[bench] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# install_missing PKG... : apt-get install the given Debian packages (as root).
install_missing() {
    (($#)) || return 0
    [[ $(id -u) -eq 0 ]] || die "missing $*; run as root or install them: apt-get install $*"
    log "installing $*"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

pid_is() { # pid pattern: is pid alive and is its command line matching pattern?
    [[ -n "$1" && -r "/proc/$1/cmdline" ]] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q -- "$2"
}

stop_nginx() {
    local pidfile="$OUT/nginx.pid" pid i
    [[ -f "$pidfile" ]] || return 0
    pid="$(cat "$pidfile" 2>/dev/null || true)"
    if pid_is "$pid" nginx; then
        kill -QUIT "$pid" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do pid_is "$pid" nginx || break; sleep 0.1; done
        pid_is "$pid" nginx && kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

# port_free PORT : fails when something listens on 127.0.0.1:PORT.
port_free() {
    ! python3 -c "import socket,sys; s=socket.socket(); s.settimeout(1); sys.exit(0 if s.connect_ex(('127.0.0.1',$1))==0 else 1)"
}

# cpu_mask N : nginx's worker_cpu_affinity mask for CPU N ("1" followed by N zeros).
cpu_mask() {
    local mask="1" i
    for ((i = 0; i < $1; i++)); do mask+="0"; done
    echo "$mask"
}
