module loadlab.bench/sse_peer

go 1.22
