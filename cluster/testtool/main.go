// SPDX-License-Identifier: GPL-2.0
//
// clustertest: the tools of cluster/vm/scenario.sh.
//
//   clustertest net-up N            machines m1..mN: network namespaces
//                                   /run/netns/mI, each joined to this one by
//                                   a veth pair cI (10.77.I.1/24, here) and
//                                   cIn (10.77.I.2/24, in mI)
//   clustertest link down|up I      cut machine I off (its veth's link down)
//                                   or heal it
//   clustertest checker -sock P -limit L
//                                   the shared resource: every holder enters
//                                   and leaves it; it counts the permits
//                                   inside, keeps the history, and answers
//                                   "stats" and "reset"
//   clustertest ask -sock P LINE    send one control line, print the answer
//   clustertest hold -sock P -m M -id ID -w W -ms T [-until FILE]
//                                   enter, hold T ms (or until FILE exists),
//                                   leave: run under fairsem run
//   clustertest load -sock P -m M -name SEM -n N -seed S ...
//                                   N holders of random weights and holds,
//                                   started at random gaps, each under
//                                   `fairsem run --name SEM -n W`
//   clustertest local PATH          the local semaphore: limit taken waiters
//   clustertest poll -name SEM -n W -sock P -m M -id ID -until FILE
//                                   an event loop's acquire: submitted
//                                   (FAIRSEM_IOC_SUBMIT), epoll until the
//                                   handle is readable, reap the grant,
//                                   then hold as hold does
//   clustertest recorder -endpoints URLS -cluster NAME -out FILE
//                                   etcd's history of the cluster semaphore,
//                                   every event from revision 1 with the
//                                   CLOCK_MONOTONIC time it was received
//   clustertest history [-endpoints URLS] -cluster NAME -events FILE M=FILE...
//                                   the checker over that history and the
//                                   agents' (history.go); exit 1 on a
//                                   violation
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"fairsem"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

func die(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "clustertest: "+format+"\n", a...)
	os.Exit(1)
}

func netUp(n int) {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		die("netns: %v", err)
	}
	for i := 1; i <= n; i++ {
		host, peer := fmt.Sprintf("c%d", i), fmt.Sprintf("c%dn", i)
		ns, err := netns.NewNamed(fmt.Sprintf("m%d", i)) // and enters it
		if err != nil {
			die("netns m%d: %v", i, err)
		}
		if err := netns.Set(orig); err != nil {
			die("netns back: %v", err)
		}
		if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: host}, PeerName: peer}); err != nil {
			die("veth %s: %v", host, err)
		}
		hl, err := netlink.LinkByName(host)
		if err != nil {
			die("%s: %v", host, err)
		}
		pl, err := netlink.LinkByName(peer)
		if err != nil {
			die("%s: %v", peer, err)
		}
		if err := netlink.LinkSetNsFd(pl, int(ns)); err != nil {
			die("move %s: %v", peer, err)
		}
		a, _ := netlink.ParseAddr(fmt.Sprintf("10.77.%d.1/24", i))
		if err := netlink.AddrAdd(hl, a); err != nil {
			die("addr %s: %v", host, err)
		}
		if err := netlink.LinkSetUp(hl); err != nil {
			die("up %s: %v", host, err)
		}
		h, err := netlink.NewHandleAt(ns)
		if err != nil {
			die("handle m%d: %v", i, err)
		}
		lo, err := h.LinkByName("lo")
		if err != nil {
			die("m%d lo: %v", i, err)
		}
		pl, err = h.LinkByName(peer)
		if err != nil {
			die("m%d %s: %v", i, peer, err)
		}
		a, _ = netlink.ParseAddr(fmt.Sprintf("10.77.%d.2/24", i))
		if err := h.AddrAdd(pl, a); err != nil {
			die("addr %s: %v", peer, err)
		}
		for _, l := range []netlink.Link{lo, pl} {
			if err := h.LinkSetUp(l); err != nil {
				die("up %s: %v", l.Attrs().Name, err)
			}
		}
		h.Delete()
		ns.Close()
		fmt.Printf("machine m%d: netns /run/netns/m%d, 10.77.%d.2 via %s\n", i, i, i, host)
	}
}

func link(how string, i int) {
	l, err := netlink.LinkByName(fmt.Sprintf("c%d", i))
	if err != nil {
		die("c%d: %v", i, err)
	}
	switch how {
	case "down":
		err = netlink.LinkSetDown(l)
	case "up":
		err = netlink.LinkSetUp(l)
	default:
		die("link down|up I")
	}
	if err != nil {
		die("link %s c%d: %v", how, i, err)
	}
}

// The checker: the resource every holder enters.  It counts what is
// inside by itself; the history is the order of entries.
type checker struct {
	mu         sync.Mutex
	limit      cvec
	inside     cvec
	max        cvec
	violations int
	enters     int
	leaves     int
	order      []string
	log        *os.File
	seq        int
}

func (c *checker) event(format string, a ...interface{}) {
	c.seq++
	fmt.Fprintf(c.log, "%d "+format+"\n", append([]interface{}{c.seq}, a...)...)
}

func (c *checker) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewScanner(conn)
	var in cvec // what this connection holds inside
	var who string
	leave := func(how string) {
		if in == nil {
			return
		}
		for i := range in {
			c.inside[i] -= in[i]
		}
		c.leaves++
		c.event("%s %s w=%s inside=%s", how, who, in, c.inside)
		in = nil
	}
	for r.Scan() {
		f := strings.Fields(r.Text())
		if len(f) == 0 {
			continue
		}
		c.mu.Lock()
		var reply string
		switch f[0] {
		case "enter": // enter MACHINE ID WEIGHT (W or W0,W1,...)
			w, ok := parseCvec(f[len(f)-1])
			if len(f) != 4 || in != nil || !ok || len(w) != len(c.limit) {
				reply = "error"
				break
			}
			in, who = w, f[1]+"/"+f[2]
			c.inside = c.inside.plus(w)
			c.enters++
			c.order = append(c.order, f[2])
			for i := range c.max {
				if c.inside[i] > c.max[i] {
					c.max[i] = c.inside[i]
				}
			}
			if !c.inside.le(c.limit) {
				c.violations++
				c.event("VIOLATION enter %s w=%s inside=%s limit=%s", who, w, c.inside, c.limit)
			} else {
				c.event("enter %s w=%s inside=%s", who, w, c.inside)
			}
			reply = "ok"
		case "leave":
			leave("leave")
			reply = "ok"
		case "limit":
			reply = "error"
			if l, ok := parseCvec(f[len(f)-1]); len(f) == 2 && ok && len(l) == len(c.limit) {
				c.limit = l
				c.event("limit %s", c.limit)
				reply = "ok"
			}
		case "stats":
			reply = fmt.Sprintf("limit=%s inside=%s max=%s violations=%d enters=%d leaves=%d order=%s",
				c.limit, c.inside, c.max, c.violations, c.enters, c.leaves, strings.Join(c.order, ","))
		case "reset":
			c.max, c.violations, c.enters, c.leaves, c.order = append(cvec(nil), c.inside...), 0, 0, 0, nil
			c.event("reset inside=%s", c.inside)
			reply = "ok"
		default:
			reply = "error"
		}
		c.mu.Unlock()
		fmt.Fprintln(conn, reply)
	}
	// A holder killed: the resource sees its user gone.
	c.mu.Lock()
	leave("gone")
	c.mu.Unlock()
}

func runChecker(args []string) {
	fs := flag.NewFlagSet("checker", flag.ExitOnError)
	sock := fs.String("sock", "", "unix socket")
	limitS := fs.String("limit", "", "the limit: L or L0,L1,...")
	logp := fs.String("log", "", "history file")
	fs.Parse(args)
	os.Remove(*sock)
	l, err := net.Listen("unix", *sock)
	if err != nil {
		die("listen: %v", err)
	}
	lf, err := os.Create(*logp)
	if err != nil {
		die("log: %v", err)
	}
	limit, ok := parseCvec(*limitS)
	if !ok {
		die("limit %q", *limitS)
	}
	c := &checker{limit: limit, inside: make(cvec, len(limit)), max: make(cvec, len(limit)), log: lf}
	for {
		conn, err := l.Accept()
		if err != nil {
			die("accept: %v", err)
		}
		go c.serve(conn)
	}
}

func dial(sock string) (net.Conn, *bufio.Reader) {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		die("dial %s: %v", sock, err)
	}
	return conn, bufio.NewReader(conn)
}

func say(conn net.Conn, r *bufio.Reader, line string) string {
	if _, err := fmt.Fprintln(conn, line); err != nil {
		die("send: %v", err)
	}
	s, err := r.ReadString('\n')
	if err != nil {
		die("answer: %v", err)
	}
	return strings.TrimSpace(s)
}

func runAsk(args []string) {
	if len(args) != 3 || args[0] != "-sock" {
		die("ask -sock P LINE")
	}
	conn, r := dial(args[1])
	fmt.Println(say(conn, r, args[2]))
}

func runHold(args []string) {
	fs := flag.NewFlagSet("hold", flag.ExitOnError)
	sock := fs.String("sock", "", "checker socket")
	m := fs.String("m", "", "machine")
	id := fs.String("id", "", "holder id")
	w := fs.String("w", "1", "weight: W or W0,W1,...")
	ms := fs.Int("ms", 0, "hold this long")
	until := fs.String("until", "", "hold until this file exists")
	fs.Parse(args)
	conn, r := dial(*sock)
	if a := say(conn, r, fmt.Sprintf("enter %s %s %s", *m, *id, *w)); a != "ok" {
		die("enter: %s", a)
	}
	if *until != "" {
		for {
			if _, err := os.Stat(*until); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	} else {
		time.Sleep(time.Duration(*ms) * time.Millisecond)
	}
	say(conn, r, "leave")
}

func runLoad(args []string) {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	sock := fs.String("sock", "", "checker socket")
	m := fs.String("m", "", "machine")
	name := fs.String("name", "", "local semaphore name")
	n := fs.Int("n", 10, "holders")
	seed := fs.Int64("seed", 1, "seed")
	wmax := fs.Int("wmax", 3, "weights 1..wmax")
	hmin := fs.Int("hmin", 100, "shortest hold, ms")
	hmax := fs.Int("hmax", 800, "longest hold, ms")
	gap := fs.Int("gap", 300, "longest gap between starts, ms")
	fs.Parse(args)
	rng := rand.New(rand.NewSource(*seed))
	self, _ := os.Executable()
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, killed, failed := 0, 0, 0
	for k := 0; k < *n; k++ {
		w := 1 + rng.Intn(*wmax)
		h := *hmin + rng.Intn(*hmax-*hmin+1)
		id := fmt.Sprintf("%s-%d", *m, k)
		cmd := exec.Command("fairsem", "run", "--name", *name, "-n", strconv.Itoa(w), "--",
			self, "hold", "-sock", *sock, "-m", *m, "-id", id, "-w", strconv.Itoa(w), "-ms", strconv.Itoa(h))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			die("start: %v", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cmd.Wait()
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ok++
			} else if st, is := cmd.ProcessState.Sys().(syscall.WaitStatus); is && st.Signaled() && st.Signal() == syscall.SIGKILL {
				killed++
			} else {
				failed++
				fmt.Fprintf(os.Stderr, "load %s: %s: %v\n", *m, id, err)
			}
		}()
		time.Sleep(time.Duration(rng.Intn(*gap+1)) * time.Millisecond)
	}
	wg.Wait()
	fmt.Printf("load %s: %d started, %d ok, %d killed, %d failed\n", *m, *n, ok, killed, failed)
	if failed > 0 || ok+killed != *n {
		os.Exit(1)
	}
}

func runLocal(args []string) {
	if len(args) != 1 {
		die("local PATH")
	}
	s, err := fairsem.OpenNamed(args[0])
	if err != nil {
		die("%s: %v", args[0], err)
	}
	k, err := fairsem.KindsFromFile(s.File())
	if err != nil {
		die("%s: %v", args[0], err)
	}
	i, err := k.Info()
	if err != nil {
		die("info: %v", err)
	}
	limit, taken := make(cvec, len(i.Kinds)), make(cvec, len(i.Kinds))
	for n, kd := range i.Kinds {
		limit[n], taken[n] = kd.Limit, kd.Taken
	}
	fmt.Printf("limit=%s taken=%s waiters=%d\n", limit, taken, i.Waiters)
}

func newFlags(name string) *flag.FlagSet { return flag.NewFlagSet(name, flag.ExitOnError) }

func main() {
	if len(os.Args) < 2 {
		die("usage: see the source")
	}
	a := os.Args[2:]
	switch os.Args[1] {
	case "net-up":
		n, _ := strconv.Atoi(a[0])
		netUp(n)
	case "link":
		i, _ := strconv.Atoi(a[1])
		link(a[0], i)
	case "checker":
		runChecker(a)
	case "ask":
		runAsk(a)
	case "hold":
		runHold(a)
	case "load":
		runLoad(a)
	case "acq":
		runAcq(os.Args[2:])
	case "loop":
		runLoop(os.Args[2:])
	case "metrics":
		runMetrics(os.Args[2:])
	case "local":
		runLocal(a)
	case "recorder":
		runRecorder(a)
	case "history":
		runHistory(a)
	case "poll":
		runPoll(a)
	default:
		die("unknown command %s", os.Args[1])
	}
}
