// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// manyWaiters is how many goroutines the tests of descriptors queue:
// $FAIRSEM_TEST_WAITERS (100000 for the figure), else 20,000, which
// a TCG VM on a loaded machine runs within the bindings' time (x/sync's
// Weighted has no limit; one descriptor a waiter met RLIMIT_NOFILE at
// about 1,000).
func manyWaiters(t *testing.T) int {
	if v := os.Getenv("FAIRSEM_TEST_WAITERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			t.Fatalf("FAIRSEM_TEST_WAITERS=%q", v)
		}
		return n
	}
	return 20000
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// queueInOrder starts goroutines from..to-1, each Acquire(ctx, 1) once the
// one before it is queued, so that the kernel's queue has them in that
// order after the queued requests already there; each sends its index to
// got when granted, or -1 - its index on failure.
func queueInOrder(t *testing.T, s *Semaphore, ctx context.Context, from, to int, got chan<- int) {
	t.Helper()
	base := info(t, s).Waiters
	for i := from; i < to; i++ {
		i := i
		go func() {
			if err := s.Acquire(ctx, 1); err != nil {
				got <- -1 - i
				return
			}
			got <- i
		}()
		want := base + uint64(i-from) + 1
		for k := 0; info(t, s).Waiters < want; k++ {
			if k > 1000000 {
				t.Fatalf("waiter %d never queued", i)
			}
			runtime.Gosched()
		}
	}
}

// expectGranted receives n indices from got and checks that they are
// exactly from..from+n-1: the next n in the queue, none failed.
func expectGranted(t *testing.T, got <-chan int, from, n int) {
	t.Helper()
	seen := make(map[int]bool, n)
	for k := 0; k < n; k++ {
		select {
		case i := <-got:
			if i < from || i >= from+n || seen[i] {
				t.Fatalf("granted %d, want the next %d from %d (FIFO)", i, n, from)
			}
			seen[i] = true
		case <-time.After(60 * time.Second):
			t.Fatalf("%d of %d granted from %d", k, n, from)
		}
	}
}

func TestHundredThousandWaitersUseABoundedNumberOfDescriptors(t *testing.T) {
	n := manyWaiters(t)
	s := mustNewHeld(t, 1)
	got := make(chan int, n)
	start := time.Now()
	queueInOrder(t, s, context.Background(), 0, 1, got)
	fds := openFDs(t) // with the waiting handle and the netpoller's own
	queueInOrder(t, s, context.Background(), 1, n, got)
	queued := time.Since(start)
	goroutines := runtime.NumGoroutine()
	if now := openFDs(t); now != fds {
		t.Fatalf("%d descriptors with %d waiters, %d with 1", now, n, fds)
	}
	start = time.Now()
	chunk := n / 100
	if chunk == 0 {
		chunk = 1
	}
	for done := 0; done < n; done += chunk {
		k := chunk
		if done+k > n {
			k = n - done
		}
		if err := s.Add(int64(k)); err != nil {
			t.Fatal(err)
		}
		expectGranted(t, got, done, k)
	}
	t.Logf("%d waiters (%d goroutines in all) on %d descriptors of the process: queued in %v, granted in order in %v",
		n, goroutines, fds, queued, time.Since(start))
	if i := info(t, s); i.Taken != uint64(n)+1 || i.Holds != uint64(n)+1 || i.Waiters != 0 {
		t.Fatalf("after every grant: %+v", i)
	}
	s.Release(int64(n) + 1)
	if i := info(t, s); i.Taken != 0 {
		t.Fatalf("after Release: %+v", i)
	}
}

// One Add grants more requests than a reap stores (the kernel's 64 a call,
// the binding's 256): the reaper reaps until none is left, as one edge of
// the netpoller is all it gets.
func TestOneAddGrantingMoreThanAReapStoresReachesEveryWaiter(t *testing.T) {
	s := mustNewHeld(t, 1)
	const n = 300
	got := make(chan int, n)
	queueInOrder(t, s, context.Background(), 0, n, got)
	if err := s.Add(n); err != nil {
		t.Fatal(err)
	}
	expectGranted(t, got, 0, n)
	if i := info(t, s); i.Holds != n+1 || i.Waiters != 0 {
		t.Fatalf("after the grants: %+v", i)
	}
}

func TestAnotherProcessWaiterKeepsItsPlaceAmongTheGoroutines(t *testing.T) {
	s := mustNewHeld(t, 1)
	got := make(chan int, 100)
	queueInOrder(t, s, context.Background(), 0, 50, got)
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
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	said := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		said <- line
	}()
	untilWaiters(t, s, 51)
	queueInOrder(t, s, context.Background(), 50, 100, got)
	s.Add(50)
	expectGranted(t, got, 0, 50)
	untilWaiters(t, s, 51) // the child at the head, 50 behind it
	s.Add(1)
	if line := <-said; line != "held\n" {
		t.Fatalf("child said %q", line)
	}
	if i := info(t, s); i.Waiters != 50 {
		t.Fatalf("the child's grant went elsewhere: %+v", i)
	}
	cmd.Process.Kill() // its permit comes back, to goroutine 50
	cmd.Wait()
	expectGranted(t, got, 50, 1)
	s.Add(49)
	expectGranted(t, got, 51, 49)
}

func TestCancelledWaitersWithdrawTheirRequests(t *testing.T) {
	s := mustNewHeld(t, 1)
	const n = 1000
	got := make(chan int, n)
	ctx, cancel := context.WithCancel(context.Background())
	queueInOrder(t, s, ctx, 0, n/2, got)
	queueInOrder(t, s, context.Background(), n/2, n, got)
	fds := openFDs(t)
	cancel()
	for k := 0; k < n/2; k++ {
		if i := <-got; i >= 0 {
			t.Fatalf("waiter %d granted after its ctx was cancelled", i)
		}
	}
	if i := info(t, s); i.Waiters != n/2 || i.Taken != 1 {
		t.Fatalf("after cancelling half: %+v", i)
	}
	s.Add(n / 2)
	expectGranted(t, got, n/2, n/2)
	if i := info(t, s); i.Taken != n/2+1 || i.Holds != n/2+1 || i.Waiters != 0 {
		t.Fatalf("after the grants: %+v", i)
	}
	if now := openFDs(t); now != fds {
		t.Fatalf("%d descriptors, %d before", now, fds)
	}
}

func TestCancelledWaiterGrantedMeanwhileGivesThePermitsBack(t *testing.T) {
	// Cancellation wins even over a grant already reaped: whatever the
	// race, a failed Acquire holds nothing.
	for round := 0; round < 50; round++ {
		s := mustNewHeld(t, 1)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- s.Acquire(ctx, 1) }()
		untilWaiters(t, s, 1)
		go s.Add(1)
		cancel()
		err := <-errc
		for k := 0; k < 5000 && info(t, s).Limit != 2; k++ {
			time.Sleep(time.Millisecond)
		}
		i := info(t, s)
		switch {
		case err == nil && i.Holds == 2 && i.Taken == 2:
		case err == context.Canceled && i.Holds == 1 && i.Taken == 1 && i.Available == 1:
		default:
			t.Fatalf("round %d: %v with %+v", round, err, i)
		}
		s.CloseHandle()
	}
}

func TestCloseFailsEveryOneOfAThousandWaiters(t *testing.T) {
	s := mustNewHeld(t, 1)
	const n = 1000
	got := make(chan int, n)
	queueInOrder(t, s, context.Background(), 0, n, got)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < n; k++ {
		if i := <-got; i >= 0 {
			t.Fatalf("waiter %d granted on a closed semaphore", i)
		}
	}
	if err := s.Acquire(context.Background(), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}
	if i := info(t, s); i.Holds != 1 || i.Waiters != 0 {
		t.Fatalf("after Close: %+v", i)
	}
}
