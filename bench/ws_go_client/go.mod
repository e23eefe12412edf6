module loadlab.bench/wsclient

go 1.23

require github.com/coder/websocket v1.8.15
