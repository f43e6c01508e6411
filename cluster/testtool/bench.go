// SPDX-License-Identifier: GPL-2.0

package main

// The benchmark's tools (cluster/vm/bench.sh):
//
//	clustertest acq -name PATH -iters N -settle exact|share|none
//	    N acquires of 1 (FAIRSEM_IOC_ACQUIRE, blocking), each released at
//	    once; before each, wait until the local semaphore is settled: its
//	    limit back to 0 (exact: the acquire needs a round trip), a permit
//	    free (share: granted from the share), or nothing (none: a plain
//	    local semaphore).  Prints the latency's median, 90th percentile
//	    and mean, in microseconds.
//	clustertest loop -name PATH -workers W -secs S -hold-ms H
//	    W threads, each with a handle of its own, acquire 1, hold H ms,
//	    release, for S seconds: grants a second and the median wait.
//	clustertest metrics -endpoints URLS
//	    etcd's revision and the bytes its gRPC servers received and sent
//	    to clients, summed over the members (/metrics).

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"go.etcd.io/etcd/clientv3"

	"fairsem"
)

// struct fairsem_acquire (80 bytes) and struct fairsem_counts (72).
type benchAcquire struct {
	deadline uint64
	flags    uint32
	nkinds   uint32
	count    [8]uint64
}

type benchCounts struct {
	nkinds uint32
	flags  uint32
	count  [8]uint64
}

const (
	benchIocAcquire = 0x4050fa01
	benchIocRelease = 0x4048fa02
)

func benchIoctl(fd uintptr, req uintptr, arg unsafe.Pointer) error {
	for {
		_, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

func acquireOne(fd uintptr) error {
	a := benchAcquire{deadline: ^uint64(0), nkinds: 1}
	a.count[0] = 1
	return benchIoctl(fd, benchIocAcquire, unsafe.Pointer(&a))
}

func releaseOne(fd uintptr) error {
	c := benchCounts{nkinds: 1}
	c.count[0] = 1
	return benchIoctl(fd, benchIocRelease, unsafe.Pointer(&c))
}

func openBench(path string) (*fairsem.Semaphore, *fairsem.Kinds) {
	s, err := fairsem.OpenNamed(path)
	if err != nil {
		die("%s: %v", path, err)
	}
	k, err := fairsem.KindsFromFile(s.File())
	if err != nil {
		die("%s: %v", path, err)
	}
	return s, k
}

func quantiles(d []time.Duration) (p50, p90, mean float64) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	us := func(x time.Duration) float64 { return float64(x) / 1e3 }
	return us(d[len(d)/2]), us(d[len(d)*9/10]), us(sum) / float64(len(d))
}

func runAcq(args []string) {
	fs := newFlags("acq")
	name := fs.String("name", "", "local semaphore")
	iters := fs.Int("iters", 20, "acquires")
	settle := fs.String("settle", "none", "exact, share or none")
	fs.Parse(args)
	s, k := openBench(*name)
	runtime.LockOSThread()
	fd := s.File().Fd()
	var d []time.Duration
	for i := 0; i < *iters; i++ {
		for t := 0; *settle != "none"; t++ {
			in, err := k.Info()
			if err != nil {
				die("info: %v", err)
			}
			if (*settle == "exact" && in.Kinds[0].Limit == 0) ||
				(*settle == "share" && in.Kinds[0].Available >= 1) {
				break
			}
			if t == 60000 {
				die("%s: not settled (%s) in 60 s", *name, *settle)
			}
			time.Sleep(time.Millisecond)
		}
		t0 := time.Now()
		if err := acquireOne(fd); err != nil {
			die("acquire: %v", err)
		}
		d = append(d, time.Since(t0))
		if err := releaseOne(fd); err != nil {
			die("release: %v", err)
		}
	}
	p50, p90, mean := quantiles(d)
	fmt.Printf("acq %s settle=%s: %d acquires, p50 %.1f us, p90 %.1f us, mean %.1f us\n",
		*name, *settle, *iters, p50, p90, mean)
}

func runLoop(args []string) {
	fs := newFlags("loop")
	name := fs.String("name", "", "local semaphore")
	workers := fs.Int("workers", 1, "threads")
	secs := fs.Float64("secs", 10, "seconds")
	holdMs := fs.Int("hold-ms", 0, "hold, ms")
	fs.Parse(args)
	end := time.Now().Add(time.Duration(*secs * float64(time.Second)))
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		s, _ := openBench(*name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			fd := s.File().Fd()
			var d []time.Duration
			for time.Now().Before(end) {
				t0 := time.Now()
				if err := acquireOne(fd); err != nil {
					die("acquire: %v", err)
				}
				d = append(d, time.Since(t0))
				time.Sleep(time.Duration(*holdMs) * time.Millisecond)
				if err := releaseOne(fd); err != nil {
					die("release: %v", err)
				}
			}
			mu.Lock()
			all = append(all, d...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	p50, p90, _ := quantiles(all)
	fmt.Printf("loop %s workers=%d: %d grants in %.0f s, %.1f grants/s, wait p50 %.1f us, p90 %.1f us\n",
		*name, *workers, len(all), *secs, float64(len(all)) / *secs, p50, p90)
}

func runMetrics(args []string) {
	fs := newFlags("metrics")
	endpoints := fs.String("endpoints", "", "etcd client URLs")
	fs.Parse(args)
	eps := strings.Split(*endpoints, ",")
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 2 * time.Second})
	if err != nil {
		die("etcd: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	g, err := cli.Get(ctx, "/fairsem-cluster-bench-none")
	cancel()
	if err != nil {
		die("etcd: %v", err)
	}
	cli.Close()
	var rx, tx float64
	for _, ep := range eps {
		resp, err := http.Get(ep + "/metrics")
		if err != nil {
			die("metrics: %v", err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 2 {
				continue
			}
			v, _ := strconv.ParseFloat(f[1], 64)
			switch f[0] {
			case "etcd_network_client_grpc_received_bytes_total":
				rx += v
			case "etcd_network_client_grpc_sent_bytes_total":
				tx += v
			}
		}
		resp.Body.Close()
	}
	fmt.Printf("metrics rev=%d rx=%.0f tx=%.0f\n", g.Header.Revision, rx, tx)
	_ = os.Stdout.Sync()
}
