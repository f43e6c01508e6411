// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A child of TestHolderKilledGivesBack: hold one permit on its own handle
// of the inherited semaphore, say so, and wait to be killed.
func TestMain(m *testing.M) {
	if os.Getenv("FAIRSEM_TEST_CHILD") == "hold" {
		sem, err := FromFile(os.NewFile(3, "sem"))
		if err == nil {
			sem, err = sem.NewHandle()
		}
		if err == nil {
			err = sem.Acquire(context.Background(), 1)
		}
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("held")
		for { // an empty select would be a deadlock to the runtime
			time.Sleep(time.Hour)
		}
	}
	os.Exit(m.Run())
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
	for k := 0; k < 5000; k++ {
		if info(t, s).Waiters == n {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("waiters stuck at %d, want %d", info(t, s).Waiters, n)
}

func TestNewHasThePermitsAskedFor(t *testing.T) {
	i := info(t, mustNew(t, 3))
	if i.Limit != 3 || i.Available != 3 || i.Taken != 0 || i.LIFO || i.Closed {
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
	s := mustNew(t, 1)
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

func TestAcquireOnDoneContextFailsAtOnce(t *testing.T) {
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

func TestAcquireZeroIsEINVAL(t *testing.T) {
	s := mustNew(t, 1)
	if err := s.Acquire(context.Background(), 0); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Acquire(0): %v", err)
	}
}

func TestCancelWithdrawsTheRequest(t *testing.T) {
	s := mustNew(t, 0)
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
	if err := s.Add(1); err != nil {
		t.Fatal(err)
	}
	if i := info(t, s); i.Available != 1 || i.Taken != 0 {
		t.Fatalf("after Add(1): %+v", i)
	}
}

func TestTimeoutContextWithdrawsTheRequest(t *testing.T) {
	s := mustNew(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.Acquire(ctx, 1); err != context.DeadlineExceeded {
		t.Fatalf("Acquire: %v", err)
	}
	if i := info(t, s); i.Waiters != 0 {
		t.Fatalf("waiters %d", i.Waiters)
	}
	// The handle is reused: its deadline must not linger.
	if err := s.Add(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(context.Background(), 1); err != nil {
		t.Fatalf("Acquire after a timeout: %v", err)
	}
}

// golang/go#37852: a cancelled Acquire at the head of the queue must let
// the smaller waiters behind it through.
func TestCancelledHeadLetsWaitersBehindThrough(t *testing.T) {
	s := mustNew(t, 2)
	if err := s.Acquire(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
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
	if i := info(t, s); i.Waiters != 0 || i.Available != 0 || i.Holds != 2 {
		t.Fatalf("after: %+v", i)
	}
}

func TestWaitersAreServedInArrivalOrder(t *testing.T) {
	s := mustNew(t, 0)
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
	s, err := NewLIFO(0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.CloseHandle()
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
	s := mustNew(t, 0)
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
	if i := info(t, s); i.Holds != 100 {
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
	s := mustNew(t, 0)
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
	s := mustNew(t, 0)
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
	s.Release(2)
	if i := info(t, s); i.Taken != 0 || i.Available != 2 {
		t.Fatalf("after Release(2): %+v", i)
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

// File passes the semaphore to a child; killed, the child's permit returns.
func TestHolderKilledGivesBack(t *testing.T) {
	s := mustNew(t, 1)
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAIRSEM_TEST_CHILD=hold")
	cmd.ExtraFiles = []*os.File{s.File()}
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
	if i := info(t, s); i.Available != 0 || i.Taken != 1 {
		t.Fatalf("child holds: %+v", i)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if i := info(t, s); i.Available != 1 || i.Taken != 0 {
		t.Fatalf("after kill -9: %+v", i)
	}
}

func TestConstantsMatchTheUapiHeader(t *testing.T) {
	path := os.Getenv("FAIRSEM_ABI")
	if path == "" {
		t.Fatal("FAIRSEM_ABI names the ABI file")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]uint64{
		"FAIRSEM_IOC_INIT": uint64(iocInit), "FAIRSEM_IOC_ACQUIRE": uint64(iocAcquire),
		"FAIRSEM_IOC_RELEASE": uint64(iocRelease), "FAIRSEM_IOC_FORGET": uint64(iocForget),
		"FAIRSEM_IOC_ADD": uint64(iocAdd), "FAIRSEM_IOC_REMOVE": uint64(iocRemove),
		"FAIRSEM_IOC_CLOSE": uint64(iocClose), "FAIRSEM_IOC_CANCEL": uint64(iocCancel),
		"FAIRSEM_IOC_INFO": uint64(iocInfo), "FAIRSEM_IOC_NEW_HANDLE": uint64(iocNewHandle),
		"FAIRSEM_MAX_PERMITS": MaxPermits, "FAIRSEM_NO_DEADLINE": noDeadline,
		"FAIRSEM_LIFO": flagLIFO, "FAIRSEM_PRIO": flagPrio,
		"FAIRSEM_ACQ_TRY": acqTry, "FAIRSEM_ACQ_ASYNC": acqAsync,
		"FAIRSEM_INFO_CLOSED": infoClosed, "FAIRSEM_INFO_ASYNC_PENDING": infoAsyncPending,
		"FAIRSEM_INFO_ASYNC_GRANTED": infoAsyncGranted,
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
