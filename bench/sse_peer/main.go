// sse_peer: the peer bench/streaming_cost.sh measures loadlab's streaming client against. A
// small Go client (the standard library only) that reads Server-Sent Events the way a careful
// hand-written client would: VUS goroutines, each over its own keep-alive connection, GET the
// URL again and again for DURATION, read the body line by line, count the events (a blank line
// ends one) and stop at `data: [DONE]`. It prints `streams events` when done; its CPU time is
// measured from outside.
//
// Usage: sse_peer URL VUS DURATION
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: sse_peer URL VUS DURATION")
		os.Exit(2)
	}
	url := os.Args[1]
	vus, err := strconv.Atoi(os.Args[2])
	if err != nil || vus < 1 {
		fmt.Fprintln(os.Stderr, "VUS: a positive number")
		os.Exit(2)
	}
	duration, err := time.ParseDuration(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "DURATION:", err)
		os.Exit(2)
	}
	end := time.Now().Add(duration)
	var streams, events, failed atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < vus; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			for time.Now().Before(end) {
				n, err := stream(client, url)
				if err != nil {
					failed.Add(1)
					continue
				}
				streams.Add(1)
				events.Add(n)
			}
		}()
	}
	wg.Wait()
	fmt.Printf("%d %d %d\n", streams.Load(), events.Load(), failed.Load())
}

// stream reads one response's events; `data: [DONE]` ends it.
func stream(client *http.Client, url string) (int64, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	var n int64
	var data bool
	for scanner.Scan() {
		line := scanner.Bytes()
		switch {
		case len(line) == 0:
			if data {
				n++
			}
			data = false
		case bytes.Equal(line, []byte("data: [DONE]")):
			return n, nil
		case bytes.HasPrefix(line, []byte("data:")):
			data = true
		}
	}
	return n, scanner.Err()
}
