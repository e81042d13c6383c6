// Command yamuxpeer is the Go side of the mux/ interop tests: the real hashicorp/yamux over a
// gorilla WebSocket used as a byte stream, as a Go worker or hub would run it.
//
// Build (offline, from Debian's golang-github-hashicorp-yamux-dev and
// golang-github-gorilla-websocket-dev):
//
//	GO111MODULE=off GOPATH=<tmp>:/usr/share/gocode go build -o yamuxpeer ./mux/src/test/go/yamuxpeer
//
// It sticks to Go 1.13 APIs so that older Debian releases' golang-go can build it too.
//
// Modes:
//
//	-mode server -listen 127.0.0.1:0 -path /mux   prints "LISTEN <addr>", accepts WebSockets and
//	                                               runs a yamux server on each ("CONN <id>", where
//	                                               <id> is the ?id= query parameter)
//	-mode client -url ws://host:port/mux          dials and runs a yamux client ("CONN c")
//	-mode bench -url ws://host:port/mux -streams N -bytes B [-warmup W] [-rtt R]
//	                                               dials as yamux client, then (after a warm-up of
//	                                               the same shape) N streams each write B bytes in
//	                                               64 KiB writes while reading the echo, and prints
//	                                               "BENCH streams=N bytes=B ns=T mbps=X" (X = N*B/T
//	                                               in 10^6 bytes/s); then R samples of open + 1 byte
//	                                               echo (after W warm-up samples): "RTT samples=R
//	                                               p50us=.. p99us=.. openp50us=..". -streams 0 skips
//	                                               the throughput part, -rtt 0 the latency part.
//	-window BYTES                                 MaxStreamWindowSize (server: ?window= overrides)
//	-script "cmd;cmd"                             commands to run first (client: on session "c")
//	-stdin                                        then read commands from stdin until EOF/"quit"
//	                                              (a server without -stdin serves until killed)
//
// Every stream the peer opens is echoed: bytes are copied back until EOF, then the stream is
// closed (FIN). Commands, one per line, "<conn-id> <command> [args]" (the id is optional in
// client mode), each answered with one line "RESULT <conn-id> <command> ok|fail <details>":
//
//	open N SIZE   open N streams at once (all are open before any is used), write SIZE
//	              pseudo-random bytes on each while reading the echo, compare SHA-256, close
//	halfclose N SIZE  as open, but close (FIN) right after writing and keep reading the echo
//	ping N        N yamux pings; details hold the round-trip times
//	hold          open a stream and echo "before" through it; keep it open
//	goaway        send GoAway(0)
//	release       echo "after" through the held stream, close it, expect EOF
//	openfails     expect Open to fail (the Java side sent GoAway or closed the session)
//	waitclose     wait (up to 20 s) until the session has ended
//	quit          exit (code 1 if any command failed)
//
// The exit code is 0 only if every command succeeded.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/ioutil"
	"math/rand"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hashicorp/yamux"
)

var (
	out      sync.Mutex
	failures int32
	sessions sync.Map // id -> *peer
)

func say(format string, args ...interface{}) {
	out.Lock()
	defer out.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

// wsConn turns a gorilla WebSocket into the byte stream yamux expects: Read streams across
// binary messages with NextReader, Write sends each call as one binary message.
type wsConn struct {
	ws  *websocket.Conn
	r   io.Reader
	wmu sync.Mutex
}

func (c *wsConn) Read(p []byte) (int, error) {
	for {
		if c.r == nil {
			mt, r, err := c.ws.NextReader()
			if err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) || strings.Contains(err.Error(), "use of closed network connection") {
					return 0, io.EOF
				}
				return 0, err
			}
			if mt != websocket.BinaryMessage {
				continue
			}
			c.r = r
		}
		n, err := c.r.Read(p)
		if err == io.EOF {
			c.r = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (c *wsConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *wsConn) Close() error {
	c.wmu.Lock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	c.wmu.Unlock()
	return c.ws.Close()
}

type peer struct {
	id   string
	sess *yamux.Session
	held net.Conn
}

func yamuxConfig(window int) *yamux.Config {
	cfg := yamux.DefaultConfig()
	cfg.MaxStreamWindowSize = uint32(window)
	// frequent keepalive pings: the Java side must answer them (ahead of queued data) within
	// ConnectionWriteTimeout (10 s) or Go ends the session, which the tests would notice
	cfg.KeepAliveInterval = 500 * time.Millisecond
	cfg.LogOutput = os.Stderr
	return cfg
}

func echoAll(p *peer) {
	for {
		st, err := p.sess.Accept()
		if err != nil {
			return
		}
		go func(st net.Conn) {
			defer st.Close()
			if _, err := io.Copy(st, st); err != nil {
				fmt.Fprintf(os.Stderr, "yamuxpeer %s: echo: %v\n", p.id, err)
			}
		}(st)
	}
}

// roundTrip writes size pseudo-random bytes (seeded) while reading the echo, and compares the
// SHA-256 digests of what was sent and received. With finFirst it closes its write side (FIN) as
// soon as everything is written and keeps reading the echo that arrives after its FIN; otherwise
// it closes after the whole echo arrived and expects EOF.
//
// Debian's yamux snapshot (2019) returns io.EOF from Read on a locally closed stream whenever its
// buffer is momentarily empty (upstream fixed this in 2024, hashicorp/yamux#131). After our FIN an
// early EOF is therefore retried until all bytes arrived or the deadline passes.
func roundTrip(st net.Conn, size int64, seed int64, finFirst bool) error {
	sent := sha256.New()
	werr := make(chan error, 1)
	var closed int32
	go func() {
		rnd := rand.New(rand.NewSource(seed))
		// large writes: Go then sends Data frames as large as the whole send window (4 MiB with
		// -window 4194304), which the Java decoder must accept
		chunk := int64(8 << 20)
		if chunk > size {
			chunk = size
		}
		buf := make([]byte, chunk)
		left := size
		for left > 0 {
			n := int64(len(buf))
			if n > left {
				n = left
			}
			rnd.Read(buf[:n])
			sent.Write(buf[:n])
			if _, err := st.Write(buf[:n]); err != nil {
				werr <- err
				return
			}
			left -= n
		}
		if finFirst {
			atomic.StoreInt32(&closed, 1)
			werr <- st.Close()
			return
		}
		werr <- nil
	}()
	got := sha256.New()
	buf := make([]byte, 64*1024)
	var n int64
	deadline := time.Now().Add(30 * time.Second)
	for n < size {
		k, err := st.Read(buf)
		got.Write(buf[:k])
		n += int64(k)
		if err == io.EOF && finFirst && atomic.LoadInt32(&closed) == 1 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // see above: EOF may be spurious after our own FIN
			continue
		}
		if err != nil {
			return fmt.Errorf("read after %d of %d bytes: %v", n, size, err)
		}
	}
	if err := <-werr; err != nil {
		return fmt.Errorf("write: %v", err)
	}
	if !finFirst {
		st.Close()
	}
	if k, _ := st.Read(buf); k != 0 {
		return fmt.Errorf("%d bytes more than sent", k)
	}
	if n != size {
		return fmt.Errorf("echoed %d bytes, want %d", n, size)
	}
	if !bytes.Equal(got.Sum(nil), sent.Sum(nil)) {
		return fmt.Errorf("sha256 mismatch")
	}
	return nil
}

func echoString(st net.Conn, s string) error {
	if _, err := st.Write([]byte(s)); err != nil {
		return err
	}
	buf := make([]byte, len(s))
	if _, err := io.ReadFull(st, buf); err != nil {
		return err
	}
	if string(buf) != s {
		return fmt.Errorf("echo %q, want %q", buf, s)
	}
	return nil
}

// benchThroughput opens n streams (all before any is used), writes size bytes on each in 64 KiB
// writes while reading the echo, and closes each stream once its whole echo arrived.
func benchThroughput(sess *yamux.Session, n int, size int64) (time.Duration, error) {
	chunk := make([]byte, 64*1024)
	for i := range chunk {
		chunk[i] = byte(i*31 + 7)
	}
	start := time.Now()
	streams := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		st, err := sess.Open()
		if err != nil {
			return 0, fmt.Errorf("open #%d: %v", i, err)
		}
		streams = append(streams, st)
	}
	errs := make(chan error, 2*n)
	for _, st := range streams {
		go func(st net.Conn) {
			left := size
			for left > 0 {
				k := int64(len(chunk))
				if k > left {
					k = left
				}
				if _, err := st.Write(chunk[:k]); err != nil {
					errs <- fmt.Errorf("write: %v", err)
					return
				}
				left -= k
			}
			errs <- nil
		}(st)
		go func(st net.Conn) {
			buf := make([]byte, 64*1024)
			var got int64
			for got < size {
				k, err := st.Read(buf)
				got += int64(k)
				if err != nil && got < size {
					errs <- fmt.Errorf("read after %d of %d bytes: %v", got, size, err)
					return
				}
			}
			st.Close()
			errs <- nil
		}(st)
	}
	for i := 0; i < 2*n; i++ {
		if err := <-errs; err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// benchLatency takes samples of open + write 1 byte + read its echo, one at a time.
func benchLatency(sess *yamux.Session, warmup, samples int) (rtt, open []time.Duration, err error) {
	one := []byte{42}
	buf := make([]byte, 1)
	for i := 0; i < warmup+samples; i++ {
		start := time.Now()
		st, err := sess.Open()
		if err != nil {
			return nil, nil, err
		}
		if _, err := st.Write(one); err != nil {
			return nil, nil, err
		}
		// yamux Open returns before the ACK; the first read completes after SYN/ACK + echo
		if _, err := io.ReadFull(st, buf); err != nil {
			return nil, nil, err
		}
		took := time.Since(start)
		st.Close()
		if i >= warmup {
			rtt = append(rtt, took)
		}
	}
	return rtt, nil, nil
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted)) + 0.5)
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func bench(url string, window, streams int, size int64, warmup, rtts int) error {
	ws, _, err := (&websocket.Dialer{ReadBufferSize: 64 * 1024, WriteBufferSize: 64 * 1024}).Dial(url, nil)
	if err != nil {
		return fmt.Errorf("dial: %v", err)
	}
	cfg := yamuxConfig(window)
	cfg.KeepAliveInterval = 30 * time.Second
	sess, err := yamux.Client(&wsConn{ws: ws}, cfg)
	if err != nil {
		return fmt.Errorf("yamux: %v", err)
	}
	defer sess.Close()
	if streams > 0 {
		if warmup > 0 {
			if _, err := benchThroughput(sess, streams, size/4+1); err != nil {
				return fmt.Errorf("warm-up: %v", err)
			}
		}
		took, err := benchThroughput(sess, streams, size)
		if err != nil {
			return err
		}
		say("BENCH streams=%d bytes=%d ns=%d mbps=%.1f", streams, size, took.Nanoseconds(),
			float64(streams)*float64(size)/took.Seconds()/1e6)
	}
	if rtts > 0 {
		rtt, _, err := benchLatency(sess, warmup, rtts)
		if err != nil {
			return fmt.Errorf("latency: %v", err)
		}
		sort.Slice(rtt, func(i, j int) bool { return rtt[i] < rtt[j] })
		say("RTT samples=%d p50us=%.1f p99us=%.1f", len(rtt),
			float64(percentile(rtt, 0.50).Nanoseconds())/1e3, float64(percentile(rtt, 0.99).Nanoseconds())/1e3)
	}
	return nil
}

func run(p *peer, cmd string, args []string) (string, error) {
	switch cmd {
	case "open", "halfclose":
		if len(args) != 2 {
			return "", fmt.Errorf("usage: %s N SIZE", cmd)
		}
		n, _ := strconv.Atoi(args[0])
		size, _ := strconv.ParseInt(args[1], 10, 64)
		start := time.Now()
		streams := make([]net.Conn, 0, n)
		for i := 0; i < n; i++ { // all N are open before any is used
			st, err := p.sess.Open()
			if err != nil {
				return "", fmt.Errorf("open #%d: %v", i, err)
			}
			streams = append(streams, st)
		}
		var wg sync.WaitGroup
		var errMu sync.Mutex
		var firstErr error
		for i, st := range streams {
			wg.Add(1)
			go func(i int, st net.Conn) {
				defer wg.Done()
				if err := roundTrip(st, size, int64(i), cmd == "halfclose"); err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("stream %d: %v", st.(*yamux.Stream).StreamID(), err)
					}
					errMu.Unlock()
				}
			}(i, st)
		}
		wg.Wait()
		if firstErr != nil {
			return "", firstErr
		}
		ms := time.Since(start).Milliseconds()
		return fmt.Sprintf("streams=%d bytes=%d ms=%d", n, size, ms), nil
	case "ping":
		n := 1
		if len(args) > 0 {
			n, _ = strconv.Atoi(args[0])
		}
		rtts := make([]string, 0, n)
		for i := 0; i < n; i++ {
			rtt, err := p.sess.Ping()
			if err != nil {
				return "", err
			}
			rtts = append(rtts, rtt.String())
		}
		return "rtt=" + strings.Join(rtts, ","), nil
	case "hold":
		st, err := p.sess.Open()
		if err != nil {
			return "", err
		}
		p.held = st
		return "stream=" + strconv.Itoa(int(st.(*yamux.Stream).StreamID())), echoString(st, "before")
	case "goaway":
		return "", p.sess.GoAway()
	case "release":
		if p.held == nil {
			return "", fmt.Errorf("no held stream")
		}
		st := p.held
		p.held = nil
		if err := echoString(st, "after"); err != nil {
			return "", err
		}
		st.Close()
		rest, err := ioutil.ReadAll(st)
		if err != nil || len(rest) != 0 {
			return "", fmt.Errorf("after FIN: %q %v", rest, err)
		}
		return "", nil
	case "openfails":
		st, err := p.sess.Open()
		if err == nil {
			st.Close()
			return "", fmt.Errorf("open succeeded")
		}
		return "err=" + strings.ReplaceAll(err.Error(), " ", "_"), nil
	case "waitclose":
		select {
		case <-p.sess.CloseChan():
			return "", nil
		case <-time.After(20 * time.Second):
			return "", fmt.Errorf("session still open")
		}
	}
	return "", fmt.Errorf("unknown command %q", cmd)
}

func command(line string, defaultID string) bool {
	f := strings.Fields(line)
	if len(f) == 0 {
		return true
	}
	if f[0] == "quit" {
		return false
	}
	id := defaultID
	if _, ok := sessions.Load(f[0]); ok || defaultID == "" {
		id, f = f[0], f[1:]
	}
	if len(f) == 0 {
		return true
	}
	v, ok := sessions.Load(id)
	var details string
	var err error
	if !ok {
		err = fmt.Errorf("no session %q", id)
	} else {
		details, err = run(v.(*peer), f[0], f[1:])
	}
	if err != nil {
		atomic.AddInt32(&failures, 1)
		say("RESULT %s %s fail %s", id, f[0], strings.ReplaceAll(err.Error(), "\n", " "))
	} else {
		say("RESULT %s %s ok %s", id, f[0], details)
	}
	return true
}

func main() {
	mode := flag.String("mode", "", "server or client")
	listen := flag.String("listen", "127.0.0.1:0", "server: listen address")
	path := flag.String("path", "/mux", "server: WebSocket path")
	url := flag.String("url", "", "client: ws:// URL")
	window := flag.Int("window", 256*1024, "MaxStreamWindowSize in bytes")
	script := flag.String("script", "", "commands separated by ';'")
	stdin := flag.Bool("stdin", false, "read further commands from stdin")
	streams := flag.Int("streams", 1, "bench: concurrent streams (0: no throughput run)")
	size := flag.Int64("bytes", 64<<20, "bench: bytes per stream")
	warmup := flag.Int("warmup", 100, "bench: warm-up (a throughput run of a quarter the size, and latency samples)")
	rtts := flag.Int("rtt", 0, "bench: open + 1 byte echo samples")
	flag.Parse()

	if *mode == "bench" {
		if err := bench(*url, *window, *streams, *size, *warmup, *rtts); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}

	defaultID := ""
	switch *mode {
	case "server":
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		up := websocket.Upgrader{ReadBufferSize: 64 * 1024, WriteBufferSize: 64 * 1024}
		mux := http.NewServeMux()
		mux.HandleFunc(*path, func(w http.ResponseWriter, r *http.Request) {
			id := r.URL.Query().Get("id")
			win := *window
			if q := r.URL.Query().Get("window"); q != "" {
				win, _ = strconv.Atoi(q)
			}
			ws, err := up.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			sess, err := yamux.Server(&wsConn{ws: ws}, yamuxConfig(win))
			if err != nil {
				say("CONN %s fail %v", id, err)
				ws.Close()
				return
			}
			p := &peer{id: id, sess: sess}
			sessions.Store(id, p)
			say("CONN %s window=%d", id, win)
			go echoAll(p)
		})
		go http.Serve(ln, mux)
		say("LISTEN %s", ln.Addr())
	case "client":
		ws, _, err := (&websocket.Dialer{ReadBufferSize: 64 * 1024, WriteBufferSize: 64 * 1024}).Dial(*url, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			os.Exit(2)
		}
		sess, err := yamux.Client(&wsConn{ws: ws}, yamuxConfig(*window))
		if err != nil {
			fmt.Fprintln(os.Stderr, "yamux:", err)
			os.Exit(2)
		}
		p := &peer{id: "c", sess: sess}
		sessions.Store("c", p)
		defaultID = "c"
		say("CONN c window=%d", *window)
		go echoAll(p)
	default:
		fmt.Fprintln(os.Stderr, "-mode server|client|bench required")
		os.Exit(2)
	}

	for _, c := range strings.Split(*script, ";") {
		if !command(c, defaultID) {
			break
		}
	}
	if *stdin {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() && command(sc.Text(), defaultID) {
		}
	} else if *mode == "server" {
		select {} // serve until killed
	}
	if atomic.LoadInt32(&failures) > 0 {
		os.Exit(1)
	}
}
