// Command bare is the yardstick for interviewd's start-up: a bare fasthttp server that
// answers every request 200 "ok". The bench builds it exactly as it builds interviewd
// (same toolchain, same flags) and measures both from exec to the first 200, so the
// figure it compares against is this machine's floor for a Go HTTP binary.
//
//	bare --addr 127.0.0.1:8080
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/valyala/fasthttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") }}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM) // before serving: a stop is never missed
	go func() {
		<-stop
		_ = srv.Shutdown()
	}()
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
}
