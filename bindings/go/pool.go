// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// What Semaphore and Kinds share: their handles, and the pool of handles
// their asynchronous requests wait on.  Only what each counts differs (a
// number, a vector), so the pool is generic over the handle that counts.

// pooled is a handle a pool keeps: *handle (Semaphore) or *kindsHandle
// (Kinds), each with its own holds.
type pooled interface{ base() *handle }

func (h *handle) base() *handle { return h }

// pool is the handles of one Semaphore or Kinds: main, its own, and those
// made for asynchronous requests; idle ones have none queued.  Every
// handle that may hold permits is in all (main first).  mu guards all,
// idle and every handle's holds.
type pool[H pooled] struct {
	main H
	mu   sync.Mutex
	all  []H
	idle []H
}

func newPool[H pooled](main H) pool[H] { return pool[H]{main: main, all: []H{main}} }

// takeIdle is an idle handle, or a new O_NONBLOCK one that mk wraps.
func (p *pool[H]) takeIdle(mk func(*handle) H) (H, error) {
	var none H
	p.mu.Lock()
	if k := len(p.idle); k > 0 {
		h := p.idle[k-1]
		p.idle = p.idle[:k-1]
		p.mu.Unlock()
		return h, nil
	}
	p.mu.Unlock()
	h, err := p.main.base().open(true)
	if err != nil {
		return none, err
	}
	if h.rc == nil {
		h.f.Close()
		return none, errno("fairsem acquire", syscall.EINVAL)
	}
	ph := mk(h)
	p.mu.Lock()
	p.all = append(p.all, ph)
	p.mu.Unlock()
	return ph, nil
}

// putIdle gives back a handle takeIdle gave, its request done.
func (p *pool[H]) putIdle(h H) {
	p.mu.Lock()
	p.idle = append(p.idle, h)
	p.mu.Unlock()
}

// CloseHandle's work: whatever the handles hold goes back.
func (p *pool[H]) closeAll() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var first error
	for _, h := range p.all {
		if err := h.base().f.Close(); err != nil && first == nil {
			first = err
		}
	}
	p.all, p.idle = nil, nil
	return first
}

// openDevice makes a new semaphore: /dev/fairsem, then the init ioctl req.
func openDevice(req uintptr, arg unsafe.Pointer) (*handle, error) {
	fd, err := syscall.Open("/dev/fairsem", syscall.O_RDWR|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: "/dev/fairsem", Err: err}
	}
	if _, err := ioctl(fd, req, arg); err != nil {
		syscall.Close(fd)
		return nil, errno("fairsem init", err)
	}
	return newHandle(fd, "fairsem")
}

// fileHandle is a handle on f, which stays the caller's.
func fileHandle(f *os.File) (*handle, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	if err := rc.Control(func(v uintptr) { fd = int(v) }); err != nil {
		return nil, err
	}
	h := &handle{f: f, fd: fd}
	if nb, _ := isNonblock(fd); nb {
		h.rc = rc
	}
	return h, nil
}

// open opens another handle on h's semaphore (FAIRSEM_IOC_NEW_HANDLE).
func (h *handle) open(nonblock bool) (*handle, error) {
	arg := sysHandle{flags: syscall.O_CLOEXEC, fd: -1}
	if nonblock {
		arg.flags |= syscall.O_NONBLOCK
	}
	fd, err := ioctl(h.fd, iocNewHandle, unsafe.Pointer(&arg))
	runtime.KeepAlive(h.f)
	if err != nil {
		return nil, errno("fairsem new handle", err)
	}
	return newHandle(fd, "fairsem")
}

// closeSem closes the semaphore for every handle (FAIRSEM_IOC_CLOSE).
func (h *handle) closeSem() error {
	_, err := ioctl(h.fd, iocClose, nil)
	runtime.KeepAlive(h.f)
	return errno("fairsem close", err)
}

func (h *handle) cancel() error {
	err := rawIoctl(h.fd, iocCancel, nil)
	runtime.KeepAlive(h.f)
	return err
}

// unlessDone keeps a grant on h only if ctx is not done: ctx done before
// the grant was seen means the Acquire failed (x/sync's rule), and
// giveBack returns the grant.
func unlessDone(ctx context.Context, h *handle, giveBack func(fd int) error) error {
	if ctx.Err() == nil {
		return nil
	}
	err := giveBack(h.fd)
	runtime.KeepAlive(h.f)
	if err != nil {
		return errno("fairsem release", err)
	}
	return ctx.Err()
}

// The past: a read deadline there wakes a waiting Read at once.
var longAgo = time.Unix(1, 0)

// wait collects h's queued request through the netpoller: the grant reads
// back as size bytes (one __u64 a kind).  On failure the request is out of
// the queue, and a grant that landed meanwhile goes back whole.
func (h *handle) wait(ctx context.Context, size int) error {
	var stop, done chan struct{}
	fired := false
	if ctx.Done() != nil {
		stop, done = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			select {
			case <-ctx.Done():
				h.f.SetReadDeadline(longAgo)
				fired = true
			case <-stop:
			}
		}()
	}
	var rerr error
	err := h.rc.Read(func(fd uintptr) bool {
		var buf [8 * MaxKinds]byte
		var n int
		n, rerr = syscall.Read(int(fd), buf[:size])
		if rerr == nil && n != size {
			rerr = syscall.EIO
		}
		return rerr != syscall.EAGAIN
	})
	if stop != nil {
		// The watcher is gone before the handle can be reused.
		close(stop)
		<-done
		if fired {
			h.f.SetReadDeadline(time.Time{})
		}
	}
	if err == nil && rerr == nil {
		return nil
	}
	// ENOENT: a close already removed the request.
	if cerr := h.cancel(); cerr != nil && cerr != syscall.ENOENT {
		return errno("fairsem cancel", cerr)
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil {
		err = rerr
	}
	return errno("fairsem acquire", err)
}
