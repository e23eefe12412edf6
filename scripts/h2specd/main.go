// h2specd runs h2spec's conformance suite for HTTP/2 *clients* (its RunClientSpec): one
// server per test case, on consecutive ports from -p, each misbehaving in its own way, and
// the client command (-e, each test case's URL appended) run once per test case. h2spec's
// v2.2.1 release (the newest on the Go module proxy) ships this suite as a library function
// only; its own h2specd command came later. Built by scripts/install-load-tools.sh, run by
// crates/engine/tests/h2spec_client.rs against crates/engine/examples/h2_get.rs.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/summerwind/h2spec"
	"github.com/summerwind/h2spec/config"
)

// Version names the suite and this harness, for the install script's cache check.
const Version = "h2spec v2.2.1, harness 1"

func main() {
	port := flag.Int("p", 0, "first port of the test cases' servers (one port each)")
	exec := flag.String("e", "", "the client command; each test case's URL is appended")
	verbose := flag.Bool("v", false, "show the client's output")
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *version {
		fmt.Println(Version)
		return
	}
	if *port == 0 || *exec == "" {
		fmt.Fprintln(os.Stderr, "usage: h2specd -p FIRST_PORT -e 'CLIENT COMMAND' [section...]")
		os.Exit(2)
	}
	c := &config.Config{
		Host:         "127.0.0.1",
		Port:         *port,
		FromPort:     *port,
		Timeout:      2 * time.Second,
		MaxHeaderLen: 4000,
		Exec:         *exec,
		Verbose:      *verbose,
		Sections:     flag.Args(),
	}
	if err := h2spec.RunClientSpec(c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
