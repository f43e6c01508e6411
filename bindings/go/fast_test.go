// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"
)

// holdFast is what the "holdfast" child of TestMain holds: one permit
// taken through its own mapping of the inherited handle, which it shares
// with its parent (FromFile, no NewHandle): the handle outlives the child.
func holdFast() error {
	s, err := FromFile(os.NewFile(3, "sem"))
	if err != nil {
		return err
	}
	if !s.IsFast() {
		return errors.New("the inherited fast semaphore is not mapped")
	}
	if !s.TryAcquire(1) {
		return errors.New("TryAcquire(1) failed")
	}
	if held := pageHolds(s); held != 1 {
		return fmt.Errorf("the page granted %d, want 1", held)
	}
	return nil
}

func mustNewFast(t *testing.T, n int64) *Semaphore {
	t.Helper()
	s, err := NewFast(n, FIFO)
	if err != nil {
		t.Fatalf("NewFast(%d): %v", n, err)
	}
	t.Cleanup(func() { s.CloseHandle() })
	if !s.IsFast() {
		t.Fatal("NewFast's Semaphore does not map its semaphore")
	}
	return s
}

func mustNewHandle(t *testing.T, s *Semaphore) *Semaphore {
	t.Helper()
	o, err := s.NewHandle()
	if err != nil {
		t.Fatalf("NewHandle: %v", err)
	}
	t.Cleanup(func() { o.CloseHandle() })
	return o
}

// word is W, the shared page's word.
func word(s *Semaphore) uint64 {
	w := atomic.LoadUint64(s.fast.word)
	runtime.KeepAlive(s.fast)
	return w
}

// slotHolds is the slot's holds: what the kernel counts for the mapping.
func slotHolds(s *Semaphore) uint32 {
	h := atomic.LoadUint32(s.fast.holds)
	runtime.KeepAlive(s.fast)
	return h
}

// pageHolds is what the Semaphore counts as the page's.
func pageHolds(s *Semaphore) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fastHolds
}

// wantPage fails unless the Semaphore's mapping holds n, in its slot
// and in its own count.
func wantPage(t *testing.T, s *Semaphore, n uint64) {
	t.Helper()
	if h, p := slotHolds(s), pageHolds(s); uint64(h) != n || p != n {
		t.Fatalf("the slot holds %d and the Semaphore counts %d for the page, want %d", h, p, n)
	}
}

// linkFast names s in a new fairsem instance, as CreateNamed names what
// it makes (which is never fast).
func linkFast(t *testing.T, s *Semaphore) string {
	t.Helper()
	dir := mountFS(t, "")
	dfd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(dfd)
	cname, _ := syscall.BytePtrFromString("fast")
	arg := sysLink{fd: int32(s.main.fd), mode: 0o600, name: uint64(uintptr(unsafe.Pointer(cname)))}
	_, err = ioctl(dfd, iocLink, unsafe.Pointer(&arg))
	runtime.KeepAlive(cname)
	runtime.KeepAlive(s.main.f)
	if err != nil {
		t.Fatalf("link: %v", err)
	}
	return dir + "/fast"
}

func TestEveryHandleOnAFastSemaphoreMapsIt(t *testing.T) {
	s := mustNewFast(t, 2)
	if !mustNewHandle(t, s).IsFast() {
		t.Fatal("NewHandle of a fast semaphore is not mapped")
	}
	f, err := FromFile(s.File())
	if err != nil {
		t.Fatal(err)
	}
	// f shares s's file, so its CloseHandle would close s's: unmap only.
	defer f.fast.unmap()
	if !f.IsFast() {
		t.Fatal("FromFile of a fast semaphore is not mapped")
	}
	if w := word(s); w != 2 {
		t.Fatalf("W of a new fast semaphore of 2 is %#x", w)
	}
}

func TestAPlainSemaphoreIsNotMapped(t *testing.T) {
	s := mustNew(t, 2)
	if s.IsFast() {
		t.Fatal("New's Semaphore is mapped")
	}
	if mustNewHandle(t, s).IsFast() {
		t.Fatal("NewHandle of a plain semaphore is mapped")
	}
}

func TestOpenNamedMapsAFastSemaphore(t *testing.T) {
	o, err := OpenNamed(linkFast(t, mustNewFast(t, 1)))
	if err != nil {
		t.Fatalf("OpenNamed: %v", err)
	}
	closeLater(t, o)
	if !o.IsFast() {
		t.Fatal("OpenNamed of a fast semaphore is not mapped")
	}
}

// A read-only handle cannot be mapped (EACCES): it takes the ioctls.
func TestAReadOnlyHandleIsNotMapped(t *testing.T) {
	path := linkFast(t, mustNewFast(t, 1))
	ro, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	s, err := FromFile(ro)
	if err != nil {
		t.Fatalf("FromFile(read-only): %v", err)
	}
	if s.IsFast() {
		t.Fatal("a read-only handle is mapped")
	}
	if s.TryAcquire(1) {
		t.Fatal("TryAcquire through a read-only handle succeeded")
	}
}

func TestNewFastAboveTheFastLimitIsEINVAL(t *testing.T) {
	if s, err := NewFast(fastMaxPermits+1, FIFO); !errors.Is(err, syscall.EINVAL) {
		if err == nil {
			s.CloseHandle()
		}
		t.Fatalf("NewFast(2^31): %v", err)
	}
	if i := info(t, mustNewFast(t, fastMaxPermits)); i.Limit != fastMaxPermits {
		t.Fatalf("NewFast(2^31-1): %+v", i)
	}
}

func TestNewFastOfAnInvalidOrderIsEINVAL(t *testing.T) {
	if _, err := NewFast(1, Order(1<<2)); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("NewFast(1, bad order): %v", err)
	}
}

func TestNewFastTakesTheOrder(t *testing.T) {
	for _, o := range []Order{LIFO, Prio} {
		s, err := NewFast(1, o)
		if err != nil {
			t.Fatalf("NewFast(1, %d): %v", o, err)
		}
		i := info(t, s)
		fast := s.IsFast()
		s.CloseHandle()
		if i.LIFO != (o == LIFO) || i.Prio != (o == Prio) || !fast {
			t.Fatalf("NewFast(1, %d): %+v, mapped %v", o, i, fast)
		}
	}
}

func TestAddPastTheFastLimitIsEOVERFLOW(t *testing.T) {
	s := mustNewFast(t, fastMaxPermits-1)
	if err := s.Add(2); !errors.Is(err, syscall.EOVERFLOW) {
		t.Fatalf("Add past 2^31-1: %v", err)
	}
	if err := s.Add(1); err != nil {
		t.Fatalf("Add up to 2^31-1: %v", err)
	}
}

// Nobody waiting, TryAcquire and Acquire are a CAS on W: the slot holds
// what they took, and W shows it gone.
func TestAcquiresTakeThePageWhenNobodyWaits(t *testing.T) {
	s := mustNewFast(t, 5)
	if !s.TryAcquire(2) {
		t.Fatal("TryAcquire(2) of 5 failed")
	}
	if err := s.Acquire(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	wantPage(t, s, 3)
	if w := word(s); w != 2 {
		t.Fatalf("W %#x, want 2 free and no bit", w)
	}
	s.Release(3)
	wantPage(t, s, 0)
	if w := word(s); w != 5 {
		t.Fatalf("W %#x after Release(3), want 5 free", w)
	}
}

// The kernel counts the page's permits in taken and in the handle's
// holds, but FAIRSEM_IOC_RELEASE of them fails: they are the mapping's.
func TestPermitsTakenThroughThePageBelongToTheMapping(t *testing.T) {
	s := mustNewFast(t, 2)
	if !s.TryAcquire(1) {
		t.Fatal("TryAcquire(1) of 2 failed")
	}
	err := sysCountOne(s.main.fd, iocRelease, 1, 0)
	runtime.KeepAlive(s.main.f)
	if !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("FAIRSEM_IOC_RELEASE of a page's permit: %v, want EINVAL", err)
	}
	if i := info(t, s); i.Taken != 1 || i.Holds != 1 || i.Available != 1 {
		t.Fatalf("after the refused RELEASE: %+v", i)
	}
	var ki sysInfoOne
	if err := sysInfoOneCall(s.main.fd, &ki); err != nil || ki.holds != 1 {
		t.Fatalf("the kernel's holds %d (%v), want 1", ki.holds, err)
	}
	s.Release(1)
	if i := info(t, s); i.Taken != 0 || i.Holds != 0 || i.Available != 2 {
		t.Fatalf("after Release(1): %+v", i)
	}
}

// queueBehindThePage: s holds 1 of 2 through its page, and another
// handle's Acquire(2) waits in the kernel's queue.
func queueBehindThePage(t *testing.T) (*Semaphore, *Semaphore, chan error) {
	t.Helper()
	s := mustNewFast(t, 2)
	if !s.TryAcquire(1) {
		t.Fatal("TryAcquire(1) of 2 failed")
	}
	o := mustNewHandle(t, s)
	errc := make(chan error, 1)
	go func() { errc <- o.Acquire(context.Background(), 2) }()
	untilWaiters(t, s, 1)
	if w := word(s); w&fastWaiters == 0 {
		t.Fatalf("W %#x with a request queued: no FAIRSEM_FAST_WAITERS", w)
	}
	return s, o, errc
}

func TestTryAcquireBehindAQueuedWaiterGoesToTheKernel(t *testing.T) {
	s, _, errc := queueBehindThePage(t)
	// One permit is free, but the waiter for 2 is ahead: no barging.
	if s.TryAcquire(1) {
		t.Fatal("TryAcquire(1) overtook the waiter for 2")
	}
	wantPage(t, s, 1)
	if i := info(t, s); i.Taken != 1 || i.Holds != 1 || i.Waiters != 1 {
		t.Fatalf("after the refused TryAcquire: %+v", i)
	}
	s.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("waiter: %v, want ErrClosed", err)
	}
}

// With a request queued, a release of the page's permits is
// FAIRSEM_IOC_RELEASE_FAST, which grants it.
func TestReleaseOfThePageGrantsAQueuedWaiter(t *testing.T) {
	s, o, errc := queueBehindThePage(t)
	s.Release(1)
	if err := <-errc; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	wantPage(t, s, 0)
	if i := info(t, o); i.Taken != 2 || i.Holds != 2 || i.Waiters != 0 {
		t.Fatalf("after the grant: %+v", i)
	}
	o.Release(2)
	if i := info(t, s); i.Taken != 0 || i.Available != 2 {
		t.Fatalf("after the waiter's Release(2): %+v", i)
	}
	// Nobody waits any more: the page serves again.
	if !s.TryAcquire(2) {
		t.Fatal("TryAcquire(2) of 2 failed")
	}
	wantPage(t, s, 2)
}

// Killed, a child that took a permit through its own mapping gives it
// back, though the handle it was mapped from lives on in this process.
func TestHolderKilledGivesBackWhatItsPageGranted(t *testing.T) {
	s := mustNewFast(t, 1)
	cmd := startHolder(t, "holdfast", s.File())
	if i := info(t, s); i.Available != 0 || i.Taken != 1 || i.Holds != 0 {
		t.Fatalf("child holds: %+v", i)
	}
	if s.TryAcquire(1) {
		t.Fatal("TryAcquire(1) succeeded while the child holds the one permit")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	until(t, "taken", 0, func() uint64 { return info(t, s).Taken })
	if i := info(t, s); i.Available != 1 {
		t.Fatalf("after kill -9: %+v", i)
	}
	if !s.TryAcquire(1) {
		t.Fatal("TryAcquire(1) after the child died failed")
	}
	wantPage(t, s, 1)
}

// Release(n) gives the page's permits back first, and the rest through
// the handle that holds them.
func TestReleaseSpansThePageAndAHandle(t *testing.T) {
	s := mustNewFast(t, 2)
	o := mustNewHandle(t, s)
	if !s.TryAcquire(1) || !o.TryAcquire(1) {
		t.Fatal("TryAcquire(1) twice of 2 failed")
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Acquire(context.Background(), 1) }()
	untilWaiters(t, s, 1)
	o.Release(1) // RELEASE_FAST: grants s's waiting handle
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	wantPage(t, s, 1)
	if i := info(t, s); i.Holds != 2 || i.Taken != 2 {
		t.Fatalf("s holds one through its page and one through a handle: %+v", i)
	}
	s.Release(2)
	wantPage(t, s, 0)
	if i := info(t, s); i.Holds != 0 || i.Taken != 0 || i.Available != 2 {
		t.Fatalf("after Release(2): %+v", i)
	}
}

func TestReleaseMoreThanThePageAndTheHandlesHoldPanics(t *testing.T) {
	s := mustNewFast(t, 2)
	if !s.TryAcquire(1) {
		t.Fatal("TryAcquire(1) of 2 failed")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
		wantPage(t, s, 1)
		if i := info(t, s); i.Holds != 1 || i.Taken != 1 {
			t.Fatalf("after the panic: %+v", i)
		}
	}()
	s.Release(2)
}

// x/sync's rule: a ctx already done fails, even with the page's permits
// free.
func TestAcquireWithADoneContextFailsEvenWhenThePageHasPermits(t *testing.T) {
	s := mustNewFast(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Acquire(ctx, 1); err != context.Canceled {
		t.Fatalf("Acquire: %v", err)
	}
	wantPage(t, s, 0)
	if w := word(s); w != 1 {
		t.Fatalf("W %#x, want 1 free", w)
	}
}

func TestCloseHandleGivesBackWhatThePageGranted(t *testing.T) {
	s := mustNewFast(t, 2)
	o, err := s.NewHandle()
	if err != nil {
		t.Fatal(err)
	}
	if !o.TryAcquire(2) {
		t.Fatal("TryAcquire(2) of 2 failed")
	}
	if i := info(t, s); i.Taken != 2 {
		t.Fatalf("before CloseHandle: %+v", i)
	}
	if err := o.CloseHandle(); err != nil {
		t.Fatal(err)
	}
	until(t, "taken", 0, func() uint64 { return info(t, s).Taken })
	if !s.TryAcquire(2) {
		t.Fatal("TryAcquire(2) after the holder's CloseHandle failed")
	}
	wantPage(t, s, 2)
}

// Goroutines of two Semaphores racing on the page and on the kernel's
// queue never hold more than the limit together, and give back all.
func TestConcurrentAcquiresOnAFastSemaphoreNeverPassTheLimit(t *testing.T) {
	const limit, workers, rounds = 3, 8, 400
	s := mustNewFast(t, limit)
	sems := []*Semaphore{s, mustNewHandle(t, s)}
	var held, most int64
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			sem := sems[k%2]
			for r := 0; r < rounds; r++ {
				if (k+r)%3 == 0 {
					if !sem.TryAcquire(1) {
						continue
					}
				} else if err := sem.Acquire(context.Background(), 1); err != nil {
					errc <- err
					return
				}
				h := atomic.AddInt64(&held, 1)
				for {
					m := atomic.LoadInt64(&most)
					if h <= m || atomic.CompareAndSwapInt64(&most, m, h) {
						break
					}
				}
				if r%16 == 0 {
					runtime.Gosched()
				}
				atomic.AddInt64(&held, -1)
				sem.Release(1)
			}
		}(k)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if most > limit {
		t.Fatalf("%d held at once, limit %d", most, limit)
	}
	if i := info(t, s); i.Taken != 0 || i.Available != limit || i.Waiters != 0 {
		t.Fatalf("after the race: %+v", i)
	}
	for _, sem := range sems {
		wantPage(t, sem, 0)
	}
}
