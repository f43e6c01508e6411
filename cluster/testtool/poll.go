// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"fairsem"
)

// struct fairsem_acquire, of a vector of one on the local semaphore's one
// kind; FAIRSEM_IOC_ACQUIRE = _IOW(0xFA, 1, 80 bytes)
type sysAcquire struct {
	deadline uint64
	flags    uint32
	nkinds   uint32
	count    [8]uint64 // FAIRSEM_MAX_KINDS
}

const (
	iocAcquire = 0x4050fa01
	acqAsync   = 1 << 1
)

// runPoll: a local program that waits as an event loop does: an
// asynchronous acquire, then epoll until its handle is readable, then
// read(2) for the count granted.  It prints "queued" once its request is
// queued, then holds as hold does.
func runPoll(args []string) {
	fs := flag.NewFlagSet("poll", flag.ExitOnError)
	name := fs.String("name", "", "local semaphore")
	n := fs.Uint64("n", 1, "count")
	sock := fs.String("sock", "", "checker socket")
	m := fs.String("m", "", "machine")
	id := fs.String("id", "", "holder id")
	until := fs.String("until", "", "hold until this file exists")
	fs.Parse(args)
	s, err := fairsem.OpenNamed(*name)
	if err != nil {
		die("%s: %v", *name, err)
	}
	fd := int(s.File().Fd())
	arg := sysAcquire{count: [8]uint64{*n}, deadline: ^uint64(0), flags: acqAsync, nkinds: 1}
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), iocAcquire, uintptr(unsafe.Pointer(&arg)))
	switch e {
	case 0:
		die("granted at once: the test wants it to wait")
	case syscall.EINPROGRESS:
		fmt.Println("queued")
	default:
		die("acquire: %v", e)
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
	for {
		k, err := syscall.EpollWait(ep, out, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			die("epoll_wait: %v", err)
		}
		if k == 1 && out[0].Events&syscall.EPOLLIN != 0 {
			break
		}
	}
	var b [8]byte
	if k, err := syscall.Read(fd, b[:]); err != nil || k != 8 {
		die("read: %d %v", k, err)
	}
	if got := binary.LittleEndian.Uint64(b[:]); got != *n {
		die("read %d, asked %d", got, *n)
	}
	fmt.Println("granted")
	conn, r := dial(*sock)
	if a := say(conn, r, fmt.Sprintf("enter %s %s %d", *m, *id, *n)); a != "ok" {
		die("enter: %s", a)
	}
	for {
		if _, err := os.Stat(*until); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	say(conn, r, "leave")
	// The handle's permits go back as the process ends.
}
