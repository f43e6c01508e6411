// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The fast path (FAIRSEM_FAST): a Semaphore whose own handle is on a fast
// semaphore maps it, and an acquire or a release that nobody waits for is
// then one compare-and-swap on the page it shares with the kernel, no
// system call.  The steps are those of models/fastpath/README.md (A1 to
// A6, R1 to R6), as libfairsem's fs_fast_take and fs_fast_give take them;
// sync/atomic's operations are sequentially consistent, at least as strong
// as each step needs.  With a request queued, or while the kernel
// reconciles, the page sends every call to the ioctls, so the fast path
// never passes a waiter.
//
// Permits taken through the page belong to the mapping, not to the handle
// (FAIRSEM_IOC_RELEASE of them fails with EINVAL): they go back through
// the page or FAIRSEM_IOC_RELEASE_FAST, and the kernel gives them back
// when the mapping goes (CloseHandle, the process's end, however it ends).
//
// A mapping is not inherited by fork(2) (VM_DONTCOPY).  A Go program
// never forks without exec (syscall.ForkExec execs at once, and exec ends
// every mapping), so, unlike libfairsem's users and the Rust binding, it
// needs no fork detection: a mapping is always its own process's.

// mapping is one mapping of a fast semaphore: the shared page (W at its
// start), then the mapping's own slot page (holds, inflight).
type mapping struct {
	mem      []byte  // syscall.Mmap's, kept for Munmap
	word     *uint64 // W
	holds    *uint32 // the slot's holds
	inflight *uint32 // the slot's inflight
}

// mapFast maps the semaphore of handle fd: nil when it is not fast
// (ENODEV, also on a module without the fast path), on a read-only handle
// (EACCES), or when the mapping fails for any other reason (then the
// ioctls serve every call, as for any other semaphore).
func mapFast(fd int) *mapping {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(fd, 0, fastMapPages*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	base := unsafe.Pointer(&mem[0])
	slot := unsafe.Pointer(&mem[page])
	m := &mapping{
		mem:      mem,
		word:     (*uint64)(base),
		holds:    (*uint32)(slot),
		inflight: (*uint32)(unsafe.Add(slot, 4)),
	}
	// A Semaphore dropped without CloseHandle: its files are closed by
	// their finalizers, and the mapping, which holds its file open, must
	// go too, or its permits would stay taken until the process ends.
	runtime.SetFinalizer(m, (*mapping).unmap)
	return m
}

// unmap ends the mapping; the kernel gives back what it holds.
func (m *mapping) unmap() {
	if m.mem == nil {
		return
	}
	runtime.SetFinalizer(m, nil)
	syscall.Munmap(m.mem)
	m.mem, m.word, m.holds, m.inflight = nil, nil, nil, nil
}

// take is A1 to A6: true when the n permits were taken here; false when
// the kernel must decide (someone waits, a reconcile, too few free).
func (m *mapping) take(n uint64) bool {
	if n == 0 || n > fastMaxPermits {
		return false
	}
	taken := false
	// A1: ordered before the CAS, the reconcile's Dekker pair.
	atomic.AddUint32(m.inflight, 1)
	w := atomic.LoadUint64(m.word)           // A2
	for w&fastBits == 0 && w&fastFree >= n { // A3
		if atomic.CompareAndSwapUint64(m.word, w, w-n) { // A4
			atomic.AddUint32(m.holds, uint32(n)) // A5
			taken = true
			break
		}
		w = atomic.LoadUint64(m.word)
	}
	// A6: after holds, so that a reconcile that sees 0 sees holds too.
	atomic.AddUint32(m.inflight, ^uint32(0))
	runtime.KeepAlive(m) // the finalizer unmaps what m's pointers point into
	return taken
}

// give is R1 to R6, or FAIRSEM_IOC_RELEASE_FAST through handle fd when a
// request is queued (which grants it): it gives back n permits that take
// took.
func (m *mapping) give(fd int, n uint64) error {
	given := false
	atomic.AddUint32(m.inflight, 1) // R1
	w := atomic.LoadUint64(m.word)  // R2
	for w&fastBits == 0 {           // R3
		if atomic.CompareAndSwapUint64(m.word, w, w+n) { // R4
			atomic.AddUint32(m.holds, -uint32(n)) // R5
			given = true
			break
		}
		w = atomic.LoadUint64(m.word)
	}
	atomic.AddUint32(m.inflight, ^uint32(0)) // R6
	var err error
	if !given {
		arg := sysFastRelease{addr: uint64(uintptr(unsafe.Pointer(m.word))), count: n}
		err = rawIoctl(fd, iocReleaseFast, unsafe.Pointer(&arg))
	}
	runtime.KeepAlive(m)
	return err
}
