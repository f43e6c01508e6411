// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// Children: "holdkinds" (TestHolderKilledGivesItsVectorBack, kinds_test.go);
// "holdfast" (TestHolderKilledGivesBackWhatItsPageGranted, fast_test.go);
// "hold" (TestHolderKilledGivesBack) holds one permit on its own
// handle of the inherited semaphore, says so, and waits to be killed;
// "add" and "close" (TestRequestAboveTheLimitSeesAnotherProcess...) add
// one permit or close the semaphore.
func TestMain(m *testing.M) {
	if c := os.Getenv("FAIRSEM_TEST_CHILD"); c == "add" || c == "close" {
		sem, err := FromFile(os.NewFile(3, "sem"))
		if err == nil && c == "add" {
			err = sem.Add(1)
		} else if err == nil {
			err = sem.Close()
		}
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("FAIRSEM_TEST_CHILD") == "holdkinds" {
		holdChild(holdKinds)
	}
	if os.Getenv("FAIRSEM_TEST_CHILD") == "holdfast" {
		holdChild(holdFast)
	}
	if os.Getenv("FAIRSEM_TEST_CHILD") == "hold" {
		holdChild(func() error {
			sem, err := FromFile(os.NewFile(3, "sem"))
			if err == nil {
				sem, err = sem.NewHandle()
			}
			if err == nil {
				err = sem.Acquire(context.Background(), 1)
			}
			return err
		})
	}
	os.Exit(m.Run())
}

// holdChild is a child of TestMain: it holds what acquire takes, says so,
// and waits to be killed.
func holdChild(acquire func() error) {
	if err := acquire(); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("held")
	for { // an empty select would be a deadlock to the runtime
		time.Sleep(time.Hour)
	}
}

// startHolder starts the child of TestMain named child with f as its fd 3,
// and returns once it says it holds.
func startHolder(t *testing.T, child string, f *os.File) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAIRSEM_TEST_CHILD="+child)
	cmd.ExtraFiles = []*os.File{f}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "held\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q", line)
	}
	return cmd
}

// until polls until what is want (10 s at most).
func until(t *testing.T, what string, want uint64, get func() uint64) {
	t.Helper()
	for k := 0; k < 5000; k++ {
		if get() == want {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%s stuck at %d, want %d", what, get(), want)
}

func mustNew(t *testing.T, n int64) *Semaphore {
	t.Helper()
	s, err := New(n)
	if err != nil {
		t.Fatalf("New(%d): %v", n, err)
	}
	t.Cleanup(func() { s.CloseHandle() })
	return s
}

// mustNewHeld makes a semaphore of limit n whose n permits s holds, so
// that a request of up to n queues (not above the limit) and waits.
func mustNewHeld(t *testing.T, n int64) *Semaphore {
	t.Helper()
	s := mustNew(t, n)
	if !s.TryAcquire(n) {
		t.Fatalf("TryAcquire(%d) of a new semaphore failed", n)
	}
	return s
}

func info(t *testing.T, s *Semaphore) Info {
	t.Helper()
	i, err := s.Info()
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	return i
}

// untilWaiters polls until n requests are queued (10 s at most).
func untilWaiters(t *testing.T, s *Semaphore, n uint64) {
	t.Helper()
	until(t, "waiters", n, func() uint64 { return info(t, s).Waiters })
}

// untilParked polls until n requests of this process wait above the limit.
func untilParked(t *testing.T, s *Semaphore, n uint64) {
	t.Helper()
	until(t, "parked", n, func() uint64 { return info(t, s).Parked })
}

func TestNewHasThePermitsAskedFor(t *testing.T) {
	i := info(t, mustNew(t, 3))
	if i.Limit != 3 || i.Available != 3 || i.Taken != 0 || i.LIFO || i.Prio || i.Closed {
		t.Fatalf("info %+v", i)
	}
}

func TestAcquireHoldsUntilRelease(t *testing.T) {
	s := mustNew(t, 3)
	if err := s.Acquire(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if i := info(t, s); i.Available != 1 || i.Holds != 2 {
		t.Fatalf("after Acquire(2): %+v", i)
	}
	s.Release(2)
	if i := info(t, s); i.Available != 3 || i.Holds != 0 {
		t.Fatalf("after Release(2): %+v", i)
	}
}

func TestTryAcquireFailsWithoutPermits(t *testing.T) {
	s := mustNew(t, 1)
	if !s.TryAcquire(1) {
		t.Fatal("first TryAcquire(1) failed")
	}
	if s.TryAcquire(1) {
		t.Fatal("second TryAcquire(1) succeeded with 0 permits")
	}
}

func TestTryAcquireNeverJumpsAWaiter(t *testing.T) {
	s := mustNew(t, 2)
	if !s.TryAcquire(1) {
		t.Fatal("TryAcquire(1) of 2 failed")
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Acquire(context.Background(), 2) }()
	untilWaiters(t, s, 1)
	if s.TryAcquire(1) {
		t.Fatal("TryAcquire(1) overtook the waiter for 2")
	}
	s.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("waiter: %v, want ErrClosed", err)
	}
}

func TestAcquireWithADoneContextFailsEvenWithPermitsFree(t *testing.T) {
	s := mustNew(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Acquire(ctx, 1); err != context.Canceled {
		t.Fatalf("Acquire: %v", err)
	}
	if i := info(t, s); i.Taken != 0 {
		t.Fatalf("taken %d", i.Taken)
	}
}

func TestAcquireNegativeIsEINVAL(t *testing.T) {
	s := mustNew(t, 1)
	if err := s.Acquire(context.Background(), -1); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Acquire(-1): %v", err)
	}
	if s.TryAcquire(-1) {
		t.Fatal("TryAcquire(-1) succeeded")
	}
}

func TestCancelWithdrawsTheRequest(t *testing.T) {
	s := mustNewHeld(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Acquire(ctx, 1) }()
	untilWaiters(t, s, 1)
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("Acquire: %v", err)
	}
	if i := info(t, s); i.Waiters != 0 {
		t.Fatalf("waiters %d after cancel", i.Waiters)
	}
	s.Release(1)
	if i := info(t, s); i.Available != 1 || i.Taken != 0 {
		t.Fatalf("after Release(1): %+v", i)
	}
}

func TestTimeoutContextWithdrawsTheRequest(t *testing.T) {
	s := mustNewHeld(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.Acquire(ctx, 1); err != context.DeadlineExceeded {
		t.Fatalf("Acquire: %v", err)
	}
	if i := info(t, s); i.Waiters != 0 {
		t.Fatalf("waiters %d", i.Waiters)
	}
	// The handle is reused: its deadline must not linger.
	s.Release(1)
	if err := s.Acquire(context.Background(), 1); err != nil {
		t.Fatalf("Acquire after a timeout: %v", err)
	}
}

// golang/go#37852: a cancelled Acquire at the head of the queue must let
// the smaller waiters behind it through.
func TestCancelledHeadLetsWaitersBehindThrough(t *testing.T) {
	s := mustNewHeld(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	head := make(chan error, 1)
	go func() { head <- s.Acquire(ctx, 3) }()
	untilWaiters(t, s, 1)
	small := make(chan error, 2)
	for k := uint64(2); k <= 3; k++ {
		go func() { small <- s.Acquire(context.Background(), 1) }()
		untilWaiters(t, s, k)
	}
	s.Release(2)
	if i := info(t, s); i.Waiters != 3 || i.Available != 2 {
		t.Fatalf("head should block the others: %+v", i)
	}
	cancel()
	if err := <-head; err != context.Canceled {
		t.Fatalf("head: %v", err)
	}
	for k := 0; k < 2; k++ {
		if err := <-small; err != nil {
			t.Fatalf("small waiter: %v", err)
		}
	}
	if i := info(t, s); i.Waiters != 0 || i.Available != 0 || i.Holds != 3 {
		t.Fatalf("after: %+v", i)
	}
}

func TestWaitersAreServedInArrivalOrder(t *testing.T) {
	s := mustNewHeld(t, 1)
	order := make(chan int, 10)
	for k := 0; k < 10; k++ {
		k := k
		go func() {
			if err := s.Acquire(context.Background(), 1); err == nil {
				order <- k
			}
		}()
		untilWaiters(t, s, uint64(k+1))
	}
	for k := 0; k < 10; k++ {
		if err := s.Add(1); err != nil {
			t.Fatal(err)
		}
		if got := <-order; got != k {
			t.Fatalf("permit %d went to waiter %d", k, got)
		}
	}
}

func TestLIFOServesTheNewestFirst(t *testing.T) {
	s, err := NewLIFO(1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.CloseHandle()
	if !s.TryAcquire(1) {
		t.Fatal("TryAcquire(1)")
	}
	order := make(chan int, 4)
	for k := 0; k < 4; k++ {
		k := k
		go func() {
			if err := s.Acquire(context.Background(), 1); err == nil {
				order <- k
			}
		}()
		untilWaiters(t, s, uint64(k+1))
	}
	for k := 3; k >= 0; k-- {
		s.Add(1)
		if got := <-order; got != k {
			t.Fatalf("want waiter %d, got %d", k, got)
		}
	}
}

// Waiting goes through the netpoller: a hundred waiters, a few threads.
func TestWaitersDoNotBlockThreads(t *testing.T) {
	s := mustNewHeld(t, 1)
	var wg sync.WaitGroup
	for k := 0; k < 100; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Acquire(context.Background(), 1)
		}()
	}
	untilWaiters(t, s, 100)
	if n := threads(t); n >= 50 {
		t.Fatalf("%d threads for 100 waiters: they block threads", n)
	}
	s.Add(100)
	wg.Wait()
	if i := info(t, s); i.Holds != 101 {
		t.Fatalf("holds %d", i.Holds)
	}
}

func threads(t *testing.T) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v := sc.Text(); strings.HasPrefix(v, "Threads:") {
			n, _ := strconv.Atoi(strings.TrimSpace(v[len("Threads:"):]))
			return n
		}
	}
	t.Fatal("no Threads line")
	return 0
}

func TestCloseFailsEveryWaiter(t *testing.T) {
	s := mustNewHeld(t, 1)
	errc := make(chan error, 4)
	for k := 0; k < 4; k++ {
		go func() { errc <- s.Acquire(context.Background(), 1) }()
	}
	untilWaiters(t, s, 4)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 4; k++ {
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Fatalf("waiter: %v", err)
		}
	}
	if !info(t, s).Closed {
		t.Fatal("not closed")
	}
	if err := s.Acquire(context.Background(), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}
}

func TestReleaseMoreThanHeldPanics(t *testing.T) {
	s := mustNew(t, 2)
	s.Acquire(context.Background(), 1)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
		if i := info(t, s); i.Holds != 1 {
			t.Fatalf("holds %d after the panic", i.Holds)
		}
	}()
	s.Release(2)
}

func TestReleaseSpansTheHandlesOfConcurrentAcquires(t *testing.T) {
	s := mustNewHeld(t, 1)
	errc := make(chan error, 2)
	for k := uint64(1); k <= 2; k++ {
		go func() { errc <- s.Acquire(context.Background(), 1) }()
		untilWaiters(t, s, k)
	}
	s.Add(2)
	for k := 0; k < 2; k++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	s.Release(3)
	if i := info(t, s); i.Taken != 0 || i.Available != 3 {
		t.Fatalf("after Release(3): %+v", i)
	}
}

func TestAddAndRemoveMoveTheLimit(t *testing.T) {
	s := mustNew(t, 1)
	if err := s.Add(4); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(3); err != nil {
		t.Fatal(err)
	}
	if i := info(t, s); i.Limit != 2 {
		t.Fatalf("limit %d", i.Limit)
	}
	if err := s.Remove(3); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Remove(3) of 2: %v", err)
	}
	if err := s.Add(MaxPermits); !errors.Is(err, syscall.EOVERFLOW) {
		t.Fatalf("Add(MaxPermits): %v", err)
	}
}

func TestNewHandleHasItsOwnAccounting(t *testing.T) {
	s := mustNew(t, 3)
	o, err := s.NewHandle()
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Acquire(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if i := info(t, s); i.Holds != 0 || i.Taken != 2 || i.Handles < 2 {
		t.Fatalf("%+v", i)
	}
	o.CloseHandle()
	if i := info(t, s); i.Taken != 0 || i.Available != 3 {
		t.Fatalf("after the other handle closed: %+v", i)
	}
}

func TestFromFileRefusesAnUnboundHandle(t *testing.T) {
	f, err := os.OpenFile("/dev/fairsem", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := FromFile(f); !errors.Is(err, syscall.EBADFD) {
		t.Fatalf("FromFile(unbound): %v", err)
	}
}

// INFO on a handle not bound yet answers: no semaphore (nkinds 0, id 0,
// every count 0), and the flags this kernel accepts.
func TestInfoOfAnUnboundHandleReportsTheKernelsFlagsAndNoSemaphore(t *testing.T) {
	f, err := os.OpenFile("/dev/fairsem", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var i sysInfo
	if err := sysInfoCall(int(f.Fd()), &i); err != nil {
		t.Fatalf("INFO of an unbound handle: %v", err)
	}
	if i.nkinds != 0 || i.id != 0 || i.waiters != 0 || i.handles != 0 || i.flags != 0 || i.kind != ([MaxKinds]sysKind{}) {
		t.Fatalf("INFO of an unbound handle: %+v", i)
	}
	if want := uint32(flagLIFO | flagPrio | flagJobserver | flagFast); i.initFlags != want {
		t.Errorf("init_flags %#x, want %#x", i.initFlags, want)
	}
	if want := uint32(acqTry | releaseForget | resizeAdd | resizeRemove | handleGovern); i.opFlags != want {
		t.Errorf("op_flags %#x, want %#x", i.opFlags, want)
	}
}

func TestInfoOfABoundHandleReportsTheKernelsFlagsToo(t *testing.T) {
	s := mustNew(t, 1)
	f, err := os.OpenFile("/dev/fairsem", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var bound, none sysInfo
	if err := sysInfoCall(s.main.fd, &bound); err != nil {
		t.Fatal(err)
	}
	if err := sysInfoCall(int(f.Fd()), &none); err != nil {
		t.Fatal(err)
	}
	if bound.nkinds != 1 || bound.initFlags != none.initFlags || bound.opFlags != none.opFlags {
		t.Fatalf("bound: nkinds %d, masks %#x %#x; unbound: %#x %#x",
			bound.nkinds, bound.initFlags, bound.opFlags, none.initFlags, none.opFlags)
	}
}

// Bit 1 of ACQUIRE's flags, once FAIRSEM_ACQ_ASYNC, is EINVAL as every
// flag INFO's op_flags does not report, and takes nothing.
func TestAcquireWithFlagBit1IsEINVALAsAnyFlagTheKernelDoesNotReport(t *testing.T) {
	s := mustNew(t, 1)
	var i sysInfo
	if err := sysInfoCall(s.main.fd, &i); err != nil {
		t.Fatal(err)
	}
	if i.opFlags&(1<<1) != 0 {
		t.Fatalf("op_flags %#x has bit 1", i.opFlags)
	}
	if err := sysAcquireOne(s.main.fd, 1, 1<<1); err != syscall.EINVAL {
		t.Fatalf("ACQUIRE with flag bit 1: %v, want EINVAL", err)
	}
	if got := info(t, s); got.Available != 1 || got.Holds != 0 || got.Waiters != 0 {
		t.Fatalf("after the refused ACQUIRE: %+v", got)
	}
}

// readOf is read(2) of fd into an 8-byte buffer.
func readOf(fd int) (int, error) {
	var buf [8]byte
	return syscall.Read(fd, buf[:])
}

// A grant is reaped, never read: read(2) of a bound handle that is not a
// jobserver's is EINVAL, and gives nothing back.
func TestReadOfABoundHandleNotAJobserversIsEINVAL(t *testing.T) {
	s := mustNewHeld(t, 1)
	if n, err := readOf(s.main.fd); err != syscall.EINVAL {
		t.Fatalf("read: %d, %v; want EINVAL", n, err)
	}
	if got := info(t, s); got.Holds != 1 {
		t.Fatalf("after the read: %+v", got)
	}
}

func TestReadOfAnUnboundHandleIsEBADFD(t *testing.T) {
	f, err := os.OpenFile("/dev/fairsem", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := readOf(int(f.Fd())); err != syscall.EBADFD {
		t.Fatalf("read: %d, %v; want EBADFD", n, err)
	}
}

// File passes the semaphore to a child; killed, the child's permit returns.
func TestHolderKilledGivesBack(t *testing.T) {
	s := mustNew(t, 1)
	cmd := startHolder(t, "hold", s.File())
	if i := info(t, s); i.Available != 0 || i.Taken != 1 {
		t.Fatalf("child holds: %+v", i)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if i := info(t, s); i.Available != 1 || i.Taken != 0 {
		t.Fatalf("after kill -9: %+v", i)
	}
}

// checkABI compares ours with the "NAME value" lines of the ABI file that
// bindings/abi.c wrote from the uapi header: every name must be there.
func checkABI(t *testing.T, ours map[string]uint64) {
	t.Helper()
	path := os.Getenv("FAIRSEM_ABI")
	if path == "" {
		t.Fatal("FAIRSEM_ABI names the ABI file")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		want, ok := ours[f[0]]
		if !ok {
			continue
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil || v != want {
			t.Errorf("%s: header %s, binding %d", f[0], f[1], want)
		}
		checked++
	}
	if checked != len(ours) {
		t.Fatalf("checked %d of %d constants", checked, len(ours))
	}
}

// ioctls are the binding's twelve, by their names in the header.
var ioctls = map[string]uintptr{
	"FAIRSEM_IOC_INIT": iocInit, "FAIRSEM_IOC_ACQUIRE": iocAcquire,
	"FAIRSEM_IOC_RELEASE": iocRelease, "FAIRSEM_IOC_RESIZE": iocResize,
	"FAIRSEM_IOC_CLOSE": iocClose, "FAIRSEM_IOC_INFO": iocInfo,
	"FAIRSEM_IOC_NEW_HANDLE": iocNewHandle, "FAIRSEM_IOC_LINK": iocLink,
	"FAIRSEM_IOC_SUBMIT": iocSubmit, "FAIRSEM_IOC_REAP": iocReap,
	"FAIRSEM_IOC_WITHDRAW": iocWithdraw, "FAIRSEM_IOC_RELEASE_FAST": iocReleaseFast,
}

func TestTheTwelveIoctlsMatchTheUapiHeader(t *testing.T) {
	ours := map[string]uint64{}
	for name, req := range ioctls {
		ours[name] = uint64(req)
	}
	checkABI(t, ours)
}

func TestTheABIFileHasNoIoctlTheBindingLacks(t *testing.T) {
	data, err := os.ReadFile(os.Getenv("FAIRSEM_ABI"))
	if err != nil {
		t.Fatalf("FAIRSEM_ABI names the ABI file: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && strings.HasPrefix(f[0], "FAIRSEM_IOC_") {
			if _, ok := ioctls[f[0]]; !ok {
				t.Errorf("%s is not in the binding", f[0])
			}
		}
	}
}

func TestTheIoctlsAreNumbered0To11(t *testing.T) {
	reqs := []uintptr{iocInit, iocAcquire, iocRelease, iocResize, iocClose, iocInfo,
		iocNewHandle, iocLink, iocSubmit, iocReap, iocWithdraw, iocReleaseFast}
	if len(reqs) != len(ioctls) {
		t.Fatalf("%d ioctls in order, %d by name", len(reqs), len(ioctls))
	}
	for nr, req := range reqs {
		if req&0xff != uintptr(nr) {
			t.Errorf("ioctl %#x is number %d, want %d", req, req&0xff, nr)
		}
	}
}

func TestConstantsMatchTheUapiHeader(t *testing.T) {
	ours := map[string]uint64{
		"FAIRSEM_MAX_PERMITS": MaxPermits, "FAIRSEM_NO_DEADLINE": noDeadline,
		"FAIRSEM_LIFO": flagLIFO, "FAIRSEM_PRIO": flagPrio,
		"FAIRSEM_JOBSERVER": flagJobserver, "FAIRSEM_FAST": flagFast,
		"FAIRSEM_ACQ_TRY":        acqTry,
		"FAIRSEM_RELEASE_FORGET": releaseForget,
		"FAIRSEM_RESIZE_ADD":     resizeAdd, "FAIRSEM_RESIZE_REMOVE": resizeRemove,
		"FAIRSEM_HANDLE_GOVERN": handleGovern,
		"FAIRSEM_INFO_CLOSED":   infoClosed, "FAIRSEM_INFO_KINDS": infoKinds,
		"FAIRSEM_FAST_MAP_PAGES":   fastMapPages,
		"FAIRSEM_FAST_MAX_PERMITS": fastMaxPermits, "FAIRSEM_FAST_FREE": fastFree,
		"FAIRSEM_FAST_WAITERS": fastWaiters, "FAIRSEM_FAST_RECONCILE": fastReconcile,
	}
	checkABI(t, ours)
}

func TestOpenNamedOfAMissingNameIsENOENT(t *testing.T) {
	if _, err := OpenNamed("/tmp/no-such-fairsem-semaphore"); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("OpenNamed: %v", err)
	}
}

func TestOpenNamedOfAPlainFileIsENOTTY(t *testing.T) {
	path := t.TempDir() + "/plain"
	if err := os.WriteFile(path, []byte("not a semaphore"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenNamed(path); !errors.Is(err, syscall.ENOTTY) {
		t.Fatalf("OpenNamed: %v", err)
	}
}

// --- x/sync's semantics (issue 17) ---

// go.dev/issue/63615, x/sync's TestWeightedAcquireCanceled, 50 rounds: ctx
// is cancelled before the permit that would grant the request comes back,
// so Acquire must fail and the permits stay free.
func TestCancellationWinsOverARacingGrant(t *testing.T) {
	for round := 0; round < 50; round++ {
		s := mustNew(t, 2)
		if err := s.Acquire(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		released := make(chan struct{})
		go func() {
			for s.TryAcquire(1) { // until the Acquire(2) below is queued
				s.Release(1)
			}
			cancel()
			s.Release(1)
			close(released)
		}()
		if err := s.Acquire(ctx, 2); err != context.Canceled {
			t.Fatalf("round %d: Acquire(2) racing its cancellation: %v, want context.Canceled", round, err)
		}
		<-released
		if i := info(t, s); i.Available != 2 || i.Holds != 0 || i.Waiters != 0 {
			t.Fatalf("round %d: the permits did not all come back: %+v", round, i)
		}
		s.CloseHandle()
	}
}

// x/sync's TestWeightedDoesntBlockIfTooBig, with its counts asserted.
func TestRequestAboveTheLimitDoesNotBlockSmallerOnes(t *testing.T) {
	s := mustNew(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	big := make(chan error, 1)
	go func() { big <- s.Acquire(ctx, 3) }()
	untilParked(t, s, 1)
	if i := info(t, s); i.Waiters != 0 || i.Available != 2 {
		t.Fatalf("the request above the limit is queued: %+v", i)
	}
	var wg sync.WaitGroup
	for k := 0; k < 6; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Acquire(context.Background(), 1); err != nil {
				t.Error(err)
				return
			}
			s.Release(1)
		}()
	}
	wg.Wait()
	if !s.TryAcquire(2) {
		t.Fatal("TryAcquire(2) held back by the request above the limit")
	}
	s.Release(2)
	cancel()
	if err := <-big; err != context.Canceled {
		t.Fatalf("Acquire(3) of 2: %v, want context.Canceled", err)
	}
	if i := info(t, s); i.Parked != 0 || i.Taken != 0 {
		t.Fatalf("after the cancel: %+v", i)
	}
}

func TestRequestAboveTheLimitEndsWithItsContext(t *testing.T) {
	s := mustNew(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.Acquire(ctx, 2); err != context.DeadlineExceeded {
		t.Fatalf("Acquire(2) of 1: %v, want context.DeadlineExceeded", err)
	}
	if i := info(t, s); i.Parked != 0 || i.Waiters != 0 || i.Taken != 0 {
		t.Fatalf("after: %+v", i)
	}
}

func TestRequestAboveTheLimitIsGrantedOnceAnAddCoversIt(t *testing.T) {
	s := mustNew(t, 2)
	errc := make(chan error, 1)
	go func() { errc <- s.Acquire(context.Background(), 3) }()
	untilParked(t, s, 1)
	if err := s.Add(1); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("Acquire(3) after Add(1): %v", err)
	}
	if i := info(t, s); i.Holds != 3 || i.Parked != 0 {
		t.Fatalf("after: %+v", i)
	}
}

func TestParkedRequestsQueueInArrivalOrder(t *testing.T) {
	s := mustNewHeld(t, 1)
	order := make(chan int, 4)
	for k := 0; k < 4; k++ {
		k := k
		go func() {
			if err := s.Acquire(context.Background(), 2); err == nil {
				order <- k
			}
		}()
		untilParked(t, s, uint64(k+1))
	}
	if err := s.Add(1); err != nil { // limit 2: all four fit, none is granted
		t.Fatal(err)
	}
	untilWaiters(t, s, 4)
	s.Release(1)
	for k := 0; k < 4; k++ {
		if got := <-order; got != k {
			t.Fatalf("grant %d went to request %d", k, got)
		}
		s.Release(2)
	}
}

// parkThenChild parks an Acquire(2) of a semaphore of 1, then has a child
// process do what (add, close) to the semaphore: Acquire's result.
func parkThenChild(t *testing.T, what string) error {
	s := mustNew(t, 1)
	errc := make(chan error, 1)
	go func() { errc <- s.Acquire(context.Background(), 2) }()
	untilParked(t, s, 1)
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAIRSEM_TEST_CHILD="+what)
	cmd.ExtraFiles = []*os.File{s.File()}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child %s: %v: %s", what, err, out)
	}
	select {
	case err := <-errc:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("the parked Acquire(2) never saw the other process's %s", what)
		return nil
	}
}

// Another process's Add is seen by the poll of INFO.
func TestRequestAboveTheLimitSeesAnotherProcessAdd(t *testing.T) {
	if err := parkThenChild(t, "add"); err != nil {
		t.Fatalf("Acquire(2) after the child's Add(1): %v", err)
	}
}

func TestRequestAboveTheLimitSeesAnotherProcessClose(t *testing.T) {
	if err := parkThenChild(t, "close"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire(2) after the child's Close: %v, want ErrClosed", err)
	}
}

// The watcher of parked requests closes its handle when none is left.
func TestParkingLeavesNoHandleBehind(t *testing.T) {
	s := mustNew(t, 1)
	before := info(t, s).Handles
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Acquire(ctx, 2) }()
	untilParked(t, s, 1)
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("Acquire(2) of 1: %v", err)
	}
	// What stays: the waiting handle the Acquire's request was queued on.
	for k := 0; k < 5000 && info(t, s).Handles != before+1; k++ {
		time.Sleep(2 * time.Millisecond)
	}
	if i := info(t, s); i.Handles != before+1 {
		t.Fatalf("%d handles, want %d: the watcher's handle stayed", i.Handles, before+1)
	}
}

func TestAcquireAboveMaxPermitsIsEINVAL(t *testing.T) {
	s := mustNew(t, 1)
	if err := s.Acquire(context.Background(), MaxPermits+1); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Acquire(MaxPermits+1): %v, want EINVAL", err)
	}
}

func TestRequestAboveTheLimitFailsWhenClosed(t *testing.T) {
	s := mustNew(t, 1)
	other, err := s.NewHandle()
	if err != nil {
		t.Fatal(err)
	}
	defer other.CloseHandle()
	errc := make(chan error, 1)
	go func() { errc <- s.Acquire(context.Background(), 2) }()
	untilParked(t, s, 1)
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire(2) of 1, closed: %v, want ErrClosed", err)
	}
}

func TestAcquireInTurnWaitsAtTheHeadAboveTheLimit(t *testing.T) {
	s := mustNew(t, 2)
	errc := make(chan error, 1)
	go func() { errc <- s.AcquireInTurn(context.Background(), 3) }()
	untilWaiters(t, s, 1)
	if i := info(t, s); i.Parked != 0 {
		t.Fatalf("AcquireInTurn parked: %+v", i)
	}
	if s.TryAcquire(1) {
		t.Fatal("TryAcquire(1) overtook the head")
	}
	if err := s.Add(1); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("AcquireInTurn(3) after Add(1): %v", err)
	}
}

func TestAcquireZeroSucceedsAtOnce(t *testing.T) {
	s := mustNewHeld(t, 1)
	go s.Acquire(context.Background(), 1)
	untilWaiters(t, s, 1)
	if err := s.Acquire(context.Background(), 0); err != nil {
		t.Fatalf("Acquire(0): %v", err)
	}
	s.Release(0)
	s.Close()
}

func TestAcquireZeroWithADoneContextFails(t *testing.T) {
	s := mustNew(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Acquire(ctx, 0); err != context.Canceled {
		t.Fatalf("Acquire(0): %v, want context.Canceled", err)
	}
}

func TestAcquireZeroOfAClosedSemaphoreIsErrClosed(t *testing.T) {
	s := mustNew(t, 1)
	s.Close()
	if err := s.Acquire(context.Background(), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire(0): %v, want ErrClosed", err)
	}
}

func TestTryAcquireZeroSucceedsWithNoWaiter(t *testing.T) {
	s := mustNewHeld(t, 1)
	if !s.TryAcquire(0) {
		t.Fatal("TryAcquire(0) failed")
	}
}

func TestTryAcquireZeroFailsBehindAWaiter(t *testing.T) {
	s := mustNewHeld(t, 1)
	go s.Acquire(context.Background(), 1)
	untilWaiters(t, s, 1)
	if s.TryAcquire(0) {
		t.Fatal("TryAcquire(0) overtook a waiter")
	}
	s.Close()
}

// --- PRIO ---

func TestNewPrioShowsPrioInInfo(t *testing.T) {
	s, err := NewPrio(1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.CloseHandle()
	if i := info(t, s); !i.Prio || i.LIFO {
		t.Fatalf("info %+v", i)
	}
}

// setRealTime puts the calling goroutine, locked to its thread for good (the
// thread ends with it), in SCHED_FIFO at prio.
func setRealTime(prio int) error {
	runtime.LockOSThread()
	param := struct{ prio int32 }{int32(prio)}
	const schedFIFO = 1
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, 0, schedFIFO, uintptr(unsafe.Pointer(&param)))
	if e != 0 {
		return e
	}
	return nil
}

func TestPrioServesARealTimeWaiterFirst(t *testing.T) {
	s, err := NewPrio(1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.CloseHandle()
	if !s.TryAcquire(1) {
		t.Fatal("TryAcquire(1)")
	}
	order := make(chan string, 2)
	go func() {
		if s.Acquire(context.Background(), 1) == nil {
			order <- "normal"
		}
	}()
	untilWaiters(t, s, 1)
	errc := make(chan error, 1)
	go func() {
		if err := setRealTime(10); err != nil {
			errc <- err
			return
		}
		errc <- nil
		if s.Acquire(context.Background(), 1) == nil {
			order <- "real-time"
		}
	}()
	if err := <-errc; err != nil {
		t.Fatalf("sched_setscheduler(SCHED_FIFO): %v", err)
	}
	untilWaiters(t, s, 2)
	for _, want := range []string{"real-time", "normal"} {
		s.Release(1)
		if got := <-order; got != want {
			t.Fatalf("granted %s first, want %s", got, want)
		}
	}
}

// --- names ---

// mountFS mounts a fairsem instance with the given options for the test.
func mountFS(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("none", dir, "fairsem", 0, opts); err != nil {
		t.Fatalf("mount -t fairsem -o %q %s: %v", opts, dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("umount %s: %v", dir, err)
		}
	})
	return dir
}

func closeLater(t *testing.T, s *Semaphore) *Semaphore {
	t.Cleanup(func() { s.CloseHandle() })
	return s
}

func TestCreateNamedMakesANameThatOpenNamedOpens(t *testing.T) {
	path := mountFS(t, "") + "/jobs"
	c, err := CreateNamed(path, 2, FIFO, 0o600)
	if err != nil {
		t.Fatalf("CreateNamed: %v", err)
	}
	closeLater(t, c)
	o, err := OpenNamed(path)
	if err != nil {
		t.Fatalf("OpenNamed: %v", err)
	}
	closeLater(t, o)
	ci, oi := info(t, c), info(t, o)
	if ci.ID != oi.ID || oi.Limit != 2 {
		t.Fatalf("created %+v, opened %+v", ci, oi)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("stat %s: %v %v", path, st.Mode(), err)
	}
}

func TestCreateNamedOfATakenNameIsEEXIST(t *testing.T) {
	path := mountFS(t, "") + "/jobs"
	c, err := CreateNamed(path, 1, FIFO, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, c)
	if _, err := CreateNamed(path, 1, FIFO, 0o600); !errors.Is(err, syscall.EEXIST) {
		t.Fatalf("CreateNamed of a taken name: %v, want EEXIST", err)
	}
}

func TestCreateNamedOutsideAFairsemFilesystemIsENOTTY(t *testing.T) {
	if _, err := CreateNamed(t.TempDir()+"/x", 1, FIFO, 0o600); !errors.Is(err, syscall.ENOTTY) {
		t.Fatalf("CreateNamed in a plain directory: %v, want ENOTTY", err)
	}
}

func TestCreateNamedTakesTheOrder(t *testing.T) {
	dir := mountFS(t, "")
	for _, o := range []Order{FIFO, LIFO, Prio} {
		s, err := CreateNamed(fmt.Sprintf("%s/o%d", dir, o), 1, o, 0o600)
		if err != nil {
			t.Fatalf("CreateNamed order %d: %v", o, err)
		}
		closeLater(t, s)
		if i := info(t, s); i.LIFO != (o == LIFO) || i.Prio != (o == Prio) {
			t.Fatalf("order %d: info %+v", o, i)
		}
	}
	if _, err := CreateNamed(dir+"/bad", 1, LIFO|Prio, 0o600); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("LIFO|Prio: %v, want EINVAL", err)
	}
}

func TestBareNameIsLookedUpInFAIRSEM_DIR(t *testing.T) {
	dir := mountFS(t, "")
	t.Setenv("FAIRSEM_DIR", dir)
	c, err := CreateNamed("bare", 1, FIFO, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, c)
	if _, err := os.Stat(dir + "/bare"); err != nil {
		t.Fatal(err)
	}
	o, err := OpenNamed("bare")
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, o)
}

func TestOpenOrCreateCreatesOnceThenOpens(t *testing.T) {
	path := mountFS(t, "") + "/build"
	a, err := OpenOrCreate(path, 3, FIFO, 0o600)
	if err != nil {
		t.Fatalf("first OpenOrCreate: %v", err)
	}
	closeLater(t, a)
	b, err := OpenOrCreate(path, 5, LIFO, 0o644)
	if err != nil {
		t.Fatalf("second OpenOrCreate: %v", err)
	}
	closeLater(t, b)
	ai, bi := info(t, a), info(t, b)
	if ai.ID != bi.ID || bi.Limit != 3 || bi.LIFO {
		t.Fatalf("first %+v, second %+v", ai, bi)
	}
}

func TestOpenOrCreateRacersShareOneSemaphore(t *testing.T) {
	path := mountFS(t, "") + "/race"
	ids := make(chan uint64, 8)
	var wg sync.WaitGroup
	for k := 0; k < 8; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := OpenOrCreate(path, 1, FIFO, 0o600)
			if err != nil {
				t.Error(err)
				return
			}
			closeLater(t, s)
			i, err := s.Info()
			if err != nil {
				t.Error(err)
				return
			}
			ids <- i.ID
		}()
	}
	wg.Wait()
	close(ids)
	first, n := uint64(0), 0
	for id := range ids {
		if n == 0 {
			first = id
		} else if id != first {
			t.Fatalf("two semaphores: %d and %d", first, id)
		}
		n++
	}
	if n != 8 {
		t.Fatalf("%d of 8 racers got a handle", n)
	}
}

// Name squatting: in a directory others may write to (mode 1777, the
// default), a name another uid made first is refused, naming the owner.
func TestOpenOrCreateRefusesANameAnotherUIDOwns(t *testing.T) {
	path := mountFS(t, "") + "/build"
	c, err := CreateNamed(path, 1000, FIFO, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, c)
	if err := os.Chown(path, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	_, err = OpenOrCreate(path, 1, FIFO, 0o600)
	var oe *OwnerError
	if !errors.Is(err, syscall.EPERM) || !errors.As(err, &oe) || oe.Owner != 4242 {
		t.Fatalf("OpenOrCreate of uid 4242's name: %v, want an OwnerError naming 4242", err)
	}
	if !strings.Contains(err.Error(), "uid 4242") {
		t.Fatalf("the error does not name the owner: %v", err)
	}
}

func TestOpenOrCreateTrustsANameWhereOthersCannotWrite(t *testing.T) {
	path := mountFS(t, "mode=0755") + "/build"
	c, err := CreateNamed(path, 1, FIFO, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, c)
	if err := os.Chown(path, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	o, err := OpenOrCreate(path, 1, FIFO, 0o600)
	if err != nil {
		t.Fatalf("OpenOrCreate in a 0755 directory: %v", err)
	}
	closeLater(t, o)
}

func TestOpenNamedTrustsAnyOwner(t *testing.T) {
	path := mountFS(t, "") + "/build"
	c, err := CreateNamed(path, 1, FIFO, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, c)
	if err := os.Chown(path, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	o, err := OpenNamed(path)
	if err != nil {
		t.Fatalf("OpenNamed of uid 4242's name: %v", err)
	}
	closeLater(t, o)
}
