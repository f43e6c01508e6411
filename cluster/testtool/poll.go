// SPDX-License-Identifier: GPL-2.0

package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"fairsem"
)

// struct fairsem_counts (72 bytes) and struct fairsem_reap (16).
type sysCounts struct {
	nkinds uint32
	flags  uint32
	count  [8]uint64 // FAIRSEM_MAX_KINDS
}

type sysReap struct {
	ids      uint64
	max      uint32
	reserved uint32
}

// _IOW(0xFA, 8, struct fairsem_counts), _IOW(0xFA, 9, struct fairsem_reap),
// _IOW(0xFA, 10, __u32)
const (
	iocSubmit   = 0x4048fa08
	iocReap     = 0x4010fa09
	iocWithdraw = 0x4004fa0a
)

func ioctlRet(fd int, req uintptr, arg unsafe.Pointer) (int, syscall.Errno) {
	for {
		r, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		if e != syscall.EINTR {
			return int(r), e
		}
	}
}

// runPoll: a local program that waits as an event loop does: submitted
// requests (FAIRSEM_IOC_SUBMIT) on one handle, of the counts of -n, then
// epoll until the handle is readable and FAIRSEM_IOC_REAP, until every
// request is granted.  It prints "queued N" once they are all queued,
// then holds them all as hold does.  With -withdraw FILE it withdraws
// them (FAIRSEM_IOC_WITHDRAW) once FILE exists instead, and ends.
func runPoll(args []string) {
	fs := flag.NewFlagSet("poll", flag.ExitOnError)
	name := fs.String("name", "", "local semaphore")
	ns := fs.String("n", "1", "counts of the requests, comma-separated: one request each")
	sock := fs.String("sock", "", "checker socket")
	m := fs.String("m", "", "machine")
	id := fs.String("id", "", "holder id")
	until := fs.String("until", "", "hold until this file exists")
	withdraw := fs.String("withdraw", "", "withdraw the requests once this file exists")
	fs.Parse(args)
	s, err := fairsem.OpenNamed(*name)
	if err != nil {
		die("%s: %v", *name, err)
	}
	fd := int(s.File().Fd())
	var total uint64
	queued := map[uint32]uint64{}
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil || n == 0 {
			die("-n %q", *ns)
		}
		arg := sysCounts{nkinds: 1, count: [8]uint64{n}}
		r, e := ioctlRet(fd, iocSubmit, unsafe.Pointer(&arg))
		switch {
		case e != 0:
			die("submit: %v", e)
		case r == 0:
			die("granted at once: the test wants it to wait")
		}
		queued[uint32(r)] = n
		total += n
	}
	fmt.Printf("queued %d\n", len(queued))
	if *withdraw != "" {
		waitFile(*withdraw)
		for rid := range queued {
			w := rid
			if _, e := ioctlRet(fd, iocWithdraw, unsafe.Pointer(&w)); e != 0 {
				die("withdraw %d: %v", rid, e)
			}
		}
		fmt.Printf("withdrawn %d\n", len(queued))
		return
	}
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		die("epoll: %v", err)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		die("epoll_ctl: %v", err)
	}
	out := make([]syscall.EpollEvent, 1)
	ids := make([]uint32, 8)
	for len(queued) > 0 {
		k, err := syscall.EpollWait(ep, out, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			die("epoll_wait: %v", err)
		}
		if k != 1 || out[0].Events&syscall.EPOLLIN == 0 {
			continue
		}
		arg := sysReap{ids: uint64(uintptr(unsafe.Pointer(&ids[0]))), max: uint32(len(ids))}
		r, e := ioctlRet(fd, iocReap, unsafe.Pointer(&arg))
		if e != 0 {
			die("reap: %v", e)
		}
		for _, rid := range ids[:r] {
			if _, ok := queued[rid]; !ok {
				die("reaped %d, not a request of ours", rid)
			}
			delete(queued, rid)
		}
	}
	fmt.Println("granted")
	conn, r := dial(*sock)
	if a := say(conn, r, fmt.Sprintf("enter %s %s %d", *m, *id, total)); a != "ok" {
		die("enter: %s", a)
	}
	waitFile(*until)
	say(conn, r, "leave")
	// The handle's permits go back as the process ends.
}

func waitFile(path string) {
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
