// A WebSocket round-trip client in Go (github.com/coder/websocket), the compiled peer of
// bench/ws-roundtrip.sh: CONNS connections, each a loop of sessions of ROUND_TRIPS text
// messages sent and their echoes awaited, for DURATION seconds. Prints the round trips done
// and the process's CPU seconds (user + system).
//
//	go run . ws://127.0.0.1:18093/ws/echo CONNS ROUND_TRIPS DURATION
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

func main() {
	url := os.Args[1]
	conns, _ := strconv.Atoi(os.Args[2])
	trips, _ := strconv.Atoi(os.Args[3])
	secs, _ := strconv.Atoi(os.Args[4])
	end := time.Now().Add(time.Duration(secs) * time.Second)
	var done atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for time.Now().Before(end) {
				ctx, cancel := context.WithDeadline(context.Background(), end.Add(5*time.Second))
				c, _, err := websocket.Dial(ctx, url, nil)
				if err != nil {
					cancel()
					time.Sleep(10 * time.Millisecond)
					continue
				}
				for n := 0; n < trips; n++ {
					msg := []byte(fmt.Sprintf(`{"n": %d}`, n))
					if c.Write(ctx, websocket.MessageText, msg) != nil {
						break
					}
					if _, _, err := c.Read(ctx); err != nil {
						break
					}
					done.Add(1)
				}
				c.Close(websocket.StatusNormalClosure, "")
				cancel()
			}
		}(i)
	}
	wg.Wait()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	fmt.Println(done.Load(), cpu)
}
