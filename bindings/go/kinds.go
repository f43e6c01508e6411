// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"context"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// Kinds is a semaphore whose permits have kinds: 1 to MaxKinds resources
// counted at once ("requests" and "bytes"), each with its own limit, in
// one queue.  A request asks for a vector, one count a kind, and is
// granted whole or not at all, so no process holds a request slot while
// it waits for bytes, and two processes cannot deadlock by taking the
// kinds in opposite orders.
//
// Acquire(ctx, vec), TryAcquire(vec) and Release(vec) are Semaphore's,
// over vectors, with the same rules where x/sync's Weighted has one:
// cancellation wins over a racing grant, and a ctx already done fails.
// Where Kinds differs from Semaphore, on purpose:
//
//   - A vector above some kind's limit queues like any other and, at the
//     head, holds back everyone behind it until the limit grows (the
//     kernel's rule, Semaphore's AcquireInTurn).  Head-of-line blocking
//     across kinds is what keeps a big request from starving, and Weighted
//     has no vectors to follow.
//   - A vector of zeros is EINVAL, as the kernel has it: there is no
//     request of nothing to make.
type Kinds struct {
	pool[*kindsHandle]
	labels []string
}

// Kind is one kind of a new Kinds: its label ([A-Za-z0-9_.-], at most 15
// bytes, unique, or empty) and its limit.
type Kind struct {
	Label string
	Limit int64
}

// KindInfo is one kind in a KindsInfo.
type KindInfo struct {
	Label     string
	Limit     uint64 // permits of this kind in all
	Available uint64 // free now
	Taken     uint64 // held by all handles
	Holds     uint64 // held by this Kinds' handles
}

// KindsInfo is one consistent snapshot of every kind.
type KindsInfo struct {
	ID      uint64
	Kinds   []KindInfo
	Waiters uint64 // queued requests, blocking and asynchronous
	Handles uint32
	LIFO    bool
	Prio    bool
	Closed  bool
}

// Kind is the kind labelled label, or nil.
func (i KindsInfo) Kind(label string) *KindInfo {
	for k := range i.Kinds {
		if i.Kinds[k].Label == label {
			return &i.Kinds[k]
		}
	}
	return nil
}

type kindsHandle struct {
	*handle
	holds [MaxKinds]uint64 // guarded by Kinds.mu
}

func newKindsHandle(h *handle) *kindsHandle { return &kindsHandle{handle: h} }

// NewKinds makes a semaphore of the kinds given, first in, first out.
// EINVAL: no kinds or more than MaxKinds, a bad label, a limit out of
// range.
func NewKinds(kinds ...Kind) (*Kinds, error) { return NewKindsOrder(FIFO, kinds...) }

// NewKindsOrder makes a semaphore of the kinds given, served in order o.
func NewKindsOrder(o Order, kinds ...Kind) (*Kinds, error) {
	arg := sysInit{flags: uint32(o), nkinds: uint32(len(kinds))}
	if len(kinds) == 0 || len(kinds) > MaxKinds || !o.valid() {
		return nil, errno("fairsem init", syscall.EINVAL)
	}
	for i, k := range kinds {
		// A label of 16 bytes has no room for its NUL; one with a NUL
		// in it would be cut short.  The kernel checks the rest.
		if k.Limit < 0 || len(k.Label) >= labelLen || containsNUL(k.Label) {
			return nil, errno("fairsem init", syscall.EINVAL)
		}
		arg.limit[i] = uint64(k.Limit)
		copy(arg.label[i][:], k.Label)
	}
	h, err := openDevice(unsafe.Pointer(&arg))
	if err != nil {
		return nil, err
	}
	return ownKinds(h)
}

// ownKinds is wrapKinds of a handle of our own, closed on failure.
func ownKinds(h *handle) (*Kinds, error) {
	k, err := wrapKinds(h)
	if err != nil {
		h.f.Close()
	}
	return k, err
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}

func wrapKinds(h *handle) (*Kinds, error) {
	var i sysInfo
	err := sysInfoBound(h.fd, &i)
	runtime.KeepAlive(h.f)
	if err != nil {
		return nil, errno("fairsem info", err)
	}
	k := &Kinds{pool: newPool(newKindsHandle(h))}
	for n := 0; n < int(i.nkinds) && n < MaxKinds; n++ {
		k.labels = append(k.labels, labelString(&i.kind[n].label))
	}
	return k, nil
}

func labelString(b *[labelLen]byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b[:])
}

// KindsFromFile takes over a handle received from elsewhere (an inherited
// descriptor), as FromFile does; on failure the file stays the caller's.
func KindsFromFile(f *os.File) (*Kinds, error) {
	h, err := fileHandle(f)
	if err != nil {
		return nil, err
	}
	return wrapKinds(h)
}

// Labels are the kinds' labels, in order: the order of every vector.
func (k *Kinds) Labels() []string { return append([]string(nil), k.labels...) }

// Vector is the vector of the counts named by label, 0 for the others.
// EINVAL for a label the semaphore has not.
func (k *Kinds) Vector(counts map[string]int64) ([]int64, error) {
	v := make([]int64, len(k.labels))
	for label, n := range counts {
		i := k.index(label)
		if i < 0 {
			return nil, errno("fairsem vector", syscall.EINVAL)
		}
		v[i] = n
	}
	return v, nil
}

func (k *Kinds) index(label string) int {
	for i, l := range k.labels {
		if l == label {
			return i
		}
	}
	return -1
}

// File is the Kinds' own handle, to pass to a child process.  It stays
// the Kinds': do not close it.
func (k *Kinds) File() *os.File { return k.main.f }

// NewHandle opens another handle on the same semaphore, with accounting
// of its own.
func (k *Kinds) NewHandle() (*Kinds, error) {
	h, err := k.main.open(false)
	if err != nil {
		return nil, err
	}
	return ownKinds(h)
}

// vector checks vec: one count a kind, none negative.  By value: a
// pointer would move it to the heap, an allocation every Acquire.
func (k *Kinds) vector(op string, vec []int64) (v [MaxKinds]uint64, err error) {
	if len(vec) != len(k.labels) {
		return v, errno(op, syscall.EINVAL)
	}
	for i, n := range vec {
		if n < 0 {
			return v, errno(op, syscall.EINVAL)
		}
		v[i] = uint64(n)
	}
	return v, nil
}

func (k *Kinds) held(h *kindsHandle, v *[MaxKinds]uint64) {
	k.mu.Lock()
	for i := range v {
		h.holds[i] += v[i]
	}
	k.mu.Unlock()
}

// TryAcquire takes the vector only if it is granted at once, never ahead
// of a waiter; false otherwise, also when closed or vec is bad.
func (k *Kinds) TryAcquire(vec []int64) bool {
	v, err := k.vector("fairsem acquire", vec)
	if err != nil {
		return false
	}
	err = sysAcquireCall(k.main.fd, &v, len(k.labels), acqTry)
	runtime.KeepAlive(k.main.f)
	if err != nil {
		return false
	}
	k.held(k.main, &v)
	return true
}

// Acquire waits its turn for the vector vec, one count a kind, all
// granted at once, or until ctx is done.  On failure nothing is held:
// ctx.Err(), an error matching ErrClosed, or EINVAL for a vector of the
// wrong length, a negative count, all zeros or a count above MaxPermits.
// A ctx already done fails at once; a grant racing with ctx becoming
// done goes back whole, and ctx.Err() is returned.
func (k *Kinds) Acquire(ctx context.Context, vec []int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v, err := k.vector("fairsem acquire", vec)
	if err != nil {
		return err
	}
	// Granted at once, a try on the own handle is the whole Acquire.
	switch err := sysAcquireCall(k.main.fd, &v, len(k.labels), acqTry); err {
	case nil:
		runtime.KeepAlive(k.main.f)
		k.held(k.main, &v)
		return nil
	case syscall.EAGAIN:
	default:
		return errno("fairsem acquire", err)
	}
	w, err := k.pool.submit(&v, len(k.labels), newKindsHandle, heldV)
	if err != nil || w == nil {
		return err // nil: granted at once
	}
	return k.await(ctx, w, k.giveBack)
}

func heldV(h *kindsHandle, v *[MaxKinds]uint64) {
	for i := range v {
		h.holds[i] += v[i]
	}
}

// giveBack returns a grant the Acquire will not keep: v from the holds,
// as much of each kind as is held.
func (k *Kinds) giveBack(v *[MaxKinds]uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.releaseLocked(*v)
}

// Release gives back the vector vec held by this Kinds.  Like Weighted's,
// it panics when vec is more than is held, in any kind, or is not a
// vector of this semaphore; then nothing is given back.  Each handle's
// share goes back in one step; permits acquired through several handles
// (concurrent Acquires) go back handle by handle.
func (k *Kinds) Release(vec []int64) {
	v, err := k.vector("fairsem release", vec)
	if err != nil {
		panic("fairsem: release of a bad vector")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := range k.labels {
		var held uint64
		for _, h := range k.all {
			held += h.holds[i]
		}
		if v[i] > held {
			panic("fairsem: released more than held")
		}
	}
	k.releaseLocked(v)
}

// releaseLocked gives back up to v of the handles' holds, each handle's
// share in one step.  k.mu is held.
func (k *Kinds) releaseLocked(v [MaxKinds]uint64) {
	for _, h := range k.all {
		var part [MaxKinds]uint64
		some := false
		for i := range k.labels {
			part[i] = min64(h.holds[i], v[i])
			some = some || part[i] > 0
		}
		if !some {
			continue
		}
		if err := sysCountsCall(h.fd, iocRelease, &part, len(k.labels), 0); err != nil {
			panic("fairsem: release: " + err.Error())
		}
		runtime.KeepAlive(h.f)
		for i := range k.labels {
			h.holds[i] -= part[i]
			v[i] -= part[i]
		}
	}
}

func min64(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

// resize raises (resizeAdd) or lowers (resizeRemove) each kind's limit.
func (k *Kinds) resize(op string, flags uint32, vec []int64) error {
	v, err := k.vector(op, vec)
	if err != nil {
		return err
	}
	err = sysCountsCall(k.main.fd, iocResize, &v, len(k.labels), flags)
	runtime.KeepAlive(k.main.f)
	return errno(op, err)
}

// Add raises each kind's limit by its count, all at once; waiters are
// served at once, in order.  EOVERFLOW past MaxPermits in any kind, and
// then no limit changes.
func (k *Kinds) Add(vec []int64) error { return k.resize("fairsem add", resizeAdd, vec) }

// Remove lowers each kind's limit by its count, even below what is taken.
// EINVAL above any kind's limit, and then no limit changes.
func (k *Kinds) Remove(vec []int64) error { return k.resize("fairsem remove", resizeRemove, vec) }

// Forget drops the vector vec of held permits from the own handle and
// lowers each kind's limit by as much.  EINVAL beyond what it holds.
func (k *Kinds) Forget(vec []int64) error {
	v, err := k.vector("fairsem forget", vec)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := range k.labels {
		if v[i] > k.main.holds[i] {
			return errno("fairsem forget", syscall.EINVAL)
		}
	}
	err = sysCountsCall(k.main.fd, iocRelease, &v, len(k.labels), releaseForget)
	runtime.KeepAlive(k.main.f)
	if err != nil {
		return errno("fairsem forget", err)
	}
	for i := range k.labels {
		k.main.holds[i] -= v[i]
	}
	return nil
}

// Close closes the semaphore for every handle in every process: waiting
// Acquires fail with ErrClosed.  Descriptors stay open: see CloseHandle.
func (k *Kinds) Close() error { return k.main.closeSem() }

// CloseHandle closes this Kinds' descriptors: whatever they hold goes
// back, every kind at once.  No other method may be called after it.
func (k *Kinds) CloseHandle() error { return k.closeAll() }

// Info takes one consistent snapshot of every kind; Holds adds up what
// this Kinds' handles hold.
func (k *Kinds) Info() (KindsInfo, error) {
	var i sysInfo
	err := sysInfoBound(k.main.fd, &i)
	runtime.KeepAlive(k.main.f)
	if err != nil {
		return KindsInfo{}, errno("fairsem info", err)
	}
	out := KindsInfo{
		ID: i.id, Waiters: i.waiters, Handles: i.handles,
		LIFO: i.flags&flagLIFO != 0, Prio: i.flags&flagPrio != 0,
		Closed: i.flags&infoClosed != 0,
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for n := 0; n < int(i.nkinds) && n < MaxKinds; n++ {
		var holds uint64
		for _, h := range k.all {
			holds += h.holds[n]
		}
		s := &i.kind[n]
		out.Kinds = append(out.Kinds, KindInfo{
			Label: labelString(&s.label), Limit: s.limit,
			Available: s.available, Taken: s.taken, Holds: holds,
		})
	}
	return out, nil
}
