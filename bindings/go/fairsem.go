// SPDX-License-Identifier: LGPL-2.1-or-later

// Package fairsem gives Go programs the fair, weighted counting semaphores
// of the /dev/fairsem kernel module, shared between processes.
//
// A Semaphore has the methods of golang.org/x/sync/semaphore.Weighted,
// Acquire(ctx, n), TryAcquire(n) and Release(n), with Weighted's
// semantics; x/sync's own tests pass against it (make check-bindings).
// Waiters are served in strict arrival order across every process sharing
// the semaphore, and the kernel gives back what a process holds when it
// ends, however it ends.
//
// Acquire waits in the runtime's netpoller, not in a blocked thread: each
// waiting Acquire is a submitted request (FAIRSEM_IOC_SUBMIT), with an id
// and its own place in the kernel's queue, on one waiting handle of the
// Semaphore (O_NONBLOCK), which polls readable when requests are granted.
// A Semaphore uses two descriptors however many goroutines wait.
// Cancelling ctx withdraws the request (FAIRSEM_IOC_WITHDRAW), giving back
// a grant not yet handed out.
//
// Where Weighted and the kernel differ, Acquire follows Weighted:
//
//   - Cancellation wins: a grant that races with ctx becoming done is
//     given back, and Acquire returns ctx.Err() (go.dev/issue/63615).  A
//     ctx already done fails even when the permits are free.
//   - A request for more than the limit does not queue, so it cannot hold
//     back the smaller ones behind it: it waits outside the kernel's queue
//     until ctx is done, the semaphore is closed, or the limit grows to
//     cover it (then it queues at the back).  The kernel's own rule, where
//     such a request waits at the head because the limit may grow, is
//     AcquireInTurn.
//   - Acquire(ctx, 0) returns nil at once and TryAcquire(0) reports true
//     when no one is queued.
//
// A fast semaphore (NewFast) takes and gives back permits without a
// system call while nobody waits: every Semaphore on one maps its shared
// page (FAIRSEM_FAST), and an Acquire, TryAcquire or Release that finds
// no request queued is one compare-and-swap there.  With a request
// queued, every call goes to the kernel as on any other semaphore, so
// fairness is unchanged, and what the page granted still comes back when
// the process ends.  Its limit is at most 2^31-1.  IsFast tells whether
// a Semaphore maps its semaphore: not on a read-only handle, nor on a
// module without the fast path.
//
// Only the standard library is used.
package fairsem

import (
	"context"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// ErrClosed matches (errors.Is) the error of an Acquire on, or waiting
// when, the semaphore is closed.
var ErrClosed error = syscall.EIDRM

// Info is a consistent snapshot of a semaphore and of one handle on it.
// Holds counts what this Semaphore's mapping of a fast semaphore took
// too.
type Info struct {
	ID        uint64 // unique while the module is loaded
	Limit     uint64 // permits in all
	Available uint64 // permits free now
	Taken     uint64 // held by all handles
	Holds     uint64 // held by this Semaphore's handles and its mapping
	Waiters   uint64 // queued requests, blocking and asynchronous
	Handles   uint32 // open handles on the semaphore
	LIFO      bool   // newest request first
	Prio      bool   // by the real-time priority of the queueing task
	Closed    bool
	// Requests of this process waiting outside the kernel's queue for the
	// limit to grow (see Acquire); not counted in Waiters.
	Parked uint64
}

// handle is one open file description on the semaphore.
type handle struct {
	f     *os.File
	rc    syscall.RawConn // set for O_NONBLOCK handles, which the netpoller watches
	fd    int
	holds uint64 // guarded by Semaphore.mu (a Kinds' handle: unused)
}

// A Semaphore is a handle on a fairsem semaphore, safe for concurrent use.
// Permits acquired through it are held by it: Release gives them back, and
// so does the end of the process.
type Semaphore struct {
	pool[*handle]
	// fast is the mapping of a fast semaphore through main (fast.go),
	// nil when there is none; fastHolds, guarded by mu, what its page
	// granted that the Semaphore holds.  The page's permits belong to
	// the mapping, not to a handle: they go back through it.
	fast      *mapping
	fastHolds uint64
}

func errno(op string, err error) error {
	if err == nil {
		return nil
	}
	return os.NewSyscallError(op, err)
}

func newHandle(fd int, name string) (*handle, error) {
	h := &handle{f: os.NewFile(uintptr(fd), name), fd: fd}
	if nb, _ := isNonblock(fd); nb {
		rc, err := h.f.SyscallConn()
		if err != nil {
			h.f.Close()
			return nil, err
		}
		h.rc = rc
	}
	return h, nil
}

func isNonblock(fd int) (bool, error) {
	fl, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if e != 0 {
		return false, e
	}
	return fl&syscall.O_NONBLOCK != 0, nil
}

// wrap makes h a Semaphore's own handle, and maps it if its semaphore is
// fast (one mmap, which fails at once on any other).
func wrap(h *handle) *Semaphore {
	s := &Semaphore{pool: newPool(h), fast: mapFast(h.fd)}
	runtime.KeepAlive(h.f)
	return s
}

func create(n int64, flags uint32) (*Semaphore, error) {
	if n < 0 {
		return nil, errno("fairsem init", syscall.EINVAL)
	}
	arg := sysInit{flags: flags, nkinds: 1}
	arg.limit[0] = uint64(n)
	h, err := openDevice(unsafe.Pointer(&arg))
	if err != nil {
		return nil, err
	}
	return wrap(h), nil
}

// Order is the order in which a semaphore serves its waiters.
type Order uint32

const (
	FIFO Order = 0        // first in, first out
	LIFO Order = flagLIFO // the newest request first
	Prio Order = flagPrio // real-time tasks first, a higher priority first; FIFO among equals
)

func (o Order) valid() bool { return o == FIFO || o == LIFO || o == Prio }

// New makes a semaphore with n permits that serves waiters first in, first
// out.  It fails with ENOENT when the module is not loaded.
func New(n int64) (*Semaphore, error) { return create(n, uint32(FIFO)) }

// NewLIFO makes a semaphore that serves the newest request first.
func NewLIFO(n int64) (*Semaphore, error) { return create(n, uint32(LIFO)) }

// NewPrio makes a semaphore that serves waiters by the real-time priority
// of the thread that queued them, sampled when queued: SCHED_FIFO,
// SCHED_RR and SCHED_DEADLINE threads first, a higher priority first, and
// every other thread alike, in arrival order.  A goroutine's priority is
// its thread's: runtime.LockOSThread, then sched_setscheduler(2).
func NewPrio(n int64) (*Semaphore, error) { return create(n, uint32(Prio)) }

// NewFast makes a fast semaphore (FAIRSEM_FAST) of n permits, served in
// order: every Semaphore on it, in any process, maps its shared page, and
// an Acquire, TryAcquire or Release that nobody waits for is then one
// atomic instruction, no system call.  With a request queued it is the
// same call as on any other semaphore: no one overtakes a waiter.  The
// permits the page granted belong to the Semaphore's mapping, which
// CloseHandle, or the end of the process, gives back.  EINVAL above
// 2^31-1 permits (FAIRSEM_FAST_MAX_PERMITS), and on a module without the
// fast path; an Add past that limit is EOVERFLOW.
func NewFast(n int64, order Order) (*Semaphore, error) {
	if !order.valid() {
		return nil, errno("fairsem init", syscall.EINVAL)
	}
	return create(n, uint32(order)|flagFast)
}

// IsFast reports whether this Semaphore maps its semaphore's fast path:
// a fast semaphore (NewFast), and a read-write handle.  Without the
// mapping every call is an ioctl, with the same semantics.
func (s *Semaphore) IsFast() bool { return s.fast != nil }

// takeFast takes n permits through the page, when nobody waits and they
// are free.
func (s *Semaphore) takeFast(n uint64) bool {
	if s.fast == nil || !s.fast.take(n) {
		return false
	}
	s.mu.Lock()
	s.fastHolds += n
	s.mu.Unlock()
	return true
}

// FromFile takes over a handle received from elsewhere, such as an
// inherited descriptor (os.NewFile(3, "sem")).  It fails with EBADFD if the
// handle is not bound to a semaphore.  What is acquired through f is held
// by its open file, which processes sharing it share: call NewHandle for a
// handle of your own, whose permits come back when your process ends.
func FromFile(f *os.File) (*Semaphore, error) {
	h, err := fileHandle(f)
	if err != nil {
		return nil, err
	}
	var info sysInfoOne
	if err := sysInfoOneCall(h.fd, &info); err != nil {
		return nil, errno("fairsem info", err)
	}
	return wrap(h), nil
}

// OpenNamed opens a named semaphore, a file in a mounted fairsem
// filesystem; a name without a '/' is looked up in $FAIRSEM_DIR, else
// DirDefault.  Each open is a new handle with accounting of its own.
// ENOENT: no such name; ENOTTY: the file is not a semaphore.  It trusts
// whoever owns the name: see OpenOrCreate for a name anyone could have made.
func OpenNamed(name string) (*Semaphore, error) {
	path, err := resolve(name)
	if err != nil {
		return nil, err
	}
	// O_NONBLOCK keeps open(2) from waiting on a FIFO of that name.
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CLOEXEC|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var info sysInfoOne
	if err := sysInfoOneCall(fd, &info); err != nil {
		syscall.Close(fd)
		if err == syscall.EBADFD {
			err = syscall.ENOTTY
		}
		return nil, errno("fairsem info", err)
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	h, err := newHandle(fd, path)
	if err != nil {
		return nil, err
	}
	return wrap(h), nil
}

// NewHandle opens another handle on the same semaphore, with accounting of
// its own: it holds nothing, and what it acquires is its own.
func (s *Semaphore) NewHandle() (*Semaphore, error) {
	h, err := s.openHandle(false)
	if err != nil {
		return nil, err
	}
	return wrap(h), nil
}

func (s *Semaphore) openHandle(nonblock bool) (*handle, error) { return s.main.open(nonblock) }

// File is the Semaphore's own handle, to pass to a child process
// (exec.Cmd.ExtraFiles).  It stays the Semaphore's: do not close it.
func (s *Semaphore) File() *os.File { return s.main.f }

// TryAcquire takes n permits only if they are granted at once, never
// overtaking a waiter.  It reports false otherwise, also when the
// semaphore is closed or n is negative.  TryAcquire(0) reports true when
// no request is queued, as Weighted's does.
func (s *Semaphore) TryAcquire(n int64) bool {
	if n <= 0 {
		return n == 0 && s.tryZero()
	}
	if s.takeFast(uint64(n)) {
		return true
	}
	err := sysAcquireOne(s.main.fd, uint64(n), acqTry)
	runtime.KeepAlive(s.main.f)
	if err != nil {
		return false
	}
	s.mu.Lock()
	s.main.holds += uint64(n)
	s.mu.Unlock()
	return true
}

func (s *Semaphore) tryZero() bool {
	var i sysInfoOne
	err := sysInfoOneCall(s.main.fd, &i)
	runtime.KeepAlive(s.main.f)
	return err == nil && i.flags&infoClosed == 0 && i.waiters == 0
}

// Acquire waits its turn for n permits, or until ctx is done, with the
// semantics of x/sync's Weighted.Acquire.  On success it returns nil; on
// failure nothing is held: ctx.Err(), an error matching ErrClosed, or
// EINVAL for n negative or above MaxPermits.
//
// A ctx already done fails at once, even when the permits are free.  A
// grant that races with ctx becoming done goes back, and ctx.Err() is
// returned: if ctx is done when Acquire sees the grant, it fails.
//
// A request for more than the semaphore's limit, as INFO tells it when the
// request would have to wait, does not queue: it would hold back every
// smaller request behind it.  It waits outside the queue (Info.Parked)
// until ctx is done, the semaphore is closed, or the limit grows to cover
// it, and then queues at the back, in arrival order with this process's
// other such requests.  An Add made in this process is seen at once; one
// made by another process within 50 ms, by a poll of INFO that runs only
// while a request waits so.
//
// Acquire(ctx, 0) holds nothing and waits for nothing: nil at once, unless
// ctx is done or the semaphore closed.  (Weighted's queues behind the
// waiters; the kernel has no request of 0 permits.)
func (s *Semaphore) Acquire(ctx context.Context, n int64) error {
	return s.acquire(ctx, n, true)
}

// AcquireInTurn is Acquire with the kernel's rule for a request above the
// limit: it queues like any other and, at the head, waits for the limit to
// grow, holding back the requests behind it; it keeps its place among the
// waiters of every process.  That is what a signalling semaphore (New(0),
// raised by Add in another process) wants.
func (s *Semaphore) AcquireInTurn(ctx context.Context, n int64) error {
	return s.acquire(ctx, n, false)
}

func (s *Semaphore) acquire(ctx context.Context, n int64, sized bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n == 0 {
		return s.acquireZero()
	}
	if n < 0 {
		return errno("fairsem acquire", syscall.EINVAL)
	}
	// The page first: nobody waits, and the permits are free.
	if s.takeFast(uint64(n)) {
		return nil
	}
	// Granted at once, a try on the Semaphore's own handle is the whole
	// Acquire: it is granted exactly when an asynchronous request would be
	// granted at once, and it needs no pooled handle.
	switch err := sysAcquireOne(s.main.fd, uint64(n), acqTry); err {
	case nil:
		runtime.KeepAlive(s.main.f)
		s.mu.Lock()
		s.main.holds += uint64(n)
		s.mu.Unlock()
		return nil
	case syscall.EAGAIN:
	default:
		return errno("fairsem acquire", err)
	}
	return s.request(ctx, uint64(n), sized)
}

func (s *Semaphore) acquireZero() error {
	var i sysInfoOne
	err := sysInfoOneCall(s.main.fd, &i)
	runtime.KeepAlive(s.main.f)
	if err == nil && i.flags&infoClosed != 0 {
		err = syscall.EIDRM
	}
	return errno("fairsem acquire", err)
}

func own(h *handle) *handle { return h }

func heldN(h *handle, v *[MaxKinds]uint64) { h.holds += v[0] }

// submit queues n on the waiting handle: a nil waiter when granted at once.
func (s *Semaphore) submit(n uint64) (*waiter, error) {
	v := [MaxKinds]uint64{n}
	return s.pool.submit(&v, 1, own, heldN)
}

// request queues n and waits for it: nil when the Semaphore holds n more.
func (s *Semaphore) request(ctx context.Context, n uint64, sized bool) error {
	w, err := s.submit(n)
	if err != nil || w == nil {
		return err // nil: granted at once
	}
	if sized {
		id, above, err := s.aboveLimit(w, n)
		if err != nil {
			return err
		}
		if above {
			return s.park(ctx, n, id)
		}
	}
	return s.await(ctx, w, s.giveBack)
}

// aboveLimit: is w's queued request for n above the limit?  If so it is
// withdrawn (a grant that landed meanwhile goes back) to wait parked.  The
// look comes after the request is queued, so that it costs nothing to an
// Acquire granted at once.
func (s *Semaphore) aboveLimit(w *waiter, n uint64) (uint64, bool, error) {
	var i sysInfoOne
	err := sysInfoOneCall(s.main.fd, &i)
	runtime.KeepAlive(s.main.f)
	if err != nil {
		if !s.withdraw(w) && <-w.done == nil {
			s.giveBack(&w.v) // granted meanwhile: this Acquire fails
		}
		return 0, false, errno("fairsem info", err)
	}
	if n <= i.limit || !s.withdraw(w) {
		return i.id, false, nil // fits, or was granted already
	}
	if i.flags&infoClosed != 0 {
		return 0, false, errno("fairsem acquire", syscall.EIDRM)
	}
	return i.id, true, nil
}

// giveBack returns a grant the Acquire will not keep: n permits from the
// Semaphore's holds, as many as are held.
func (s *Semaphore) giveBack(v *[MaxKinds]uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(v[0])
}

// releaseLocked gives back up to n of what the Semaphore holds: the
// mapping's first, through the page, then the handles'.  s.mu is held.
func (s *Semaphore) releaseLocked(n uint64) {
	left := n
	if k := min64(s.fastHolds, left); k > 0 {
		err := s.fast.give(s.main.fd, k)
		runtime.KeepAlive(s.main.f)
		if err != nil {
			panic("fairsem: release: " + err.Error())
		}
		s.fastHolds -= k
		left -= k
	}
	for _, h := range s.all {
		k := h.holds
		if k > left {
			k = left
		}
		if k == 0 {
			continue
		}
		if err := sysCountOne(h.fd, iocRelease, k, 0); err != nil {
			panic("fairsem: release: " + err.Error())
		}
		runtime.KeepAlive(h.f)
		h.holds -= k
		left -= k
	}
}

// Release gives back n permits held by this Semaphore.  Like Weighted, it
// panics when n is more than it holds.
func (s *Semaphore) Release(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := s.fastHolds
	for _, h := range s.all {
		held += h.holds
	}
	if n < 0 || uint64(n) > held {
		panic("fairsem: released more than held")
	}
	s.releaseLocked(uint64(n))
}

// resize raises (resizeAdd) or lowers (resizeRemove) the limit by n.
func (s *Semaphore) resize(op string, flags uint32, n int64) error {
	if n <= 0 {
		return errno(op, syscall.EINVAL)
	}
	err := sysCountOne(s.main.fd, iocResize, uint64(n), flags)
	runtime.KeepAlive(s.main.f)
	return errno(op, err)
}

// Add raises the limit by n; waiters are served at once, in order, and
// this process's parked requests (see Acquire) that now fit queue behind
// them.  EOVERFLOW past MaxPermits.
func (s *Semaphore) Add(n int64) error {
	err := s.resize("fairsem add", resizeAdd, n)
	if err == nil {
		s.kickParked()
	}
	return err
}

// Remove lowers the limit by n, even below what is held (then nothing is
// granted until enough comes back).  EINVAL above the limit.
func (s *Semaphore) Remove(n int64) error { return s.resize("fairsem remove", resizeRemove, n) }

// Close closes the semaphore for every handle in every process: waiting
// Acquires fail with ErrClosed, and so does every Acquire after.  Release
// still works.  It does not close descriptors: see CloseHandle.
func (s *Semaphore) Close() error {
	err := s.main.closeSem()
	if err == nil {
		s.kickParked()
	}
	return err
}

// CloseHandle closes this Semaphore's descriptors, and ends its mapping of
// a fast semaphore: whatever they hold goes back to the semaphore.  No
// other method may be called after it.
func (s *Semaphore) CloseHandle() error {
	s.mu.Lock()
	m := s.fast
	s.fast, s.fastHolds = nil, 0
	s.mu.Unlock()
	if m != nil {
		m.unmap() // the kernel gives back what the page granted
	}
	return s.closeAll()
}

// Info takes a consistent snapshot of the semaphore; Holds adds up what
// this Semaphore's handles and its mapping hold.
func (s *Semaphore) Info() (Info, error) {
	var i sysInfoOne
	err := sysInfoOneCall(s.main.fd, &i)
	runtime.KeepAlive(s.main.f)
	if err != nil {
		return Info{}, errno("fairsem info", err)
	}
	s.mu.Lock()
	holds := s.fastHolds
	for _, h := range s.all {
		holds += h.holds
	}
	s.mu.Unlock()
	return Info{
		ID: i.id, Limit: i.limit, Available: i.available, Taken: i.taken,
		Holds: holds, Waiters: i.waiters, Handles: i.handles,
		LIFO: i.flags&flagLIFO != 0, Prio: i.flags&flagPrio != 0,
		Closed: i.flags&infoClosed != 0, Parked: lot.count(i.id),
	}, nil
}
