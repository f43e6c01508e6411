// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"context"
	"errors"
	"os"
	"reflect"
	"syscall"
	"testing"
	"unsafe"
)

// holdKinds is what the "holdkinds" child of TestMain holds: {1, 600} on
// its own handle of the inherited semaphore.
func holdKinds() error {
	k, err := KindsFromFile(os.NewFile(3, "sem"))
	if err == nil {
		k, err = k.NewHandle()
	}
	if err == nil {
		err = k.Acquire(context.Background(), []int64{1, 600})
	}
	return err
}

func mustKinds(t *testing.T, requests, bytes int64) *Kinds {
	t.Helper()
	k, err := NewKinds(Kind{"requests", requests}, Kind{"bytes", bytes})
	if err != nil {
		t.Fatalf("NewKinds: %v", err)
	}
	t.Cleanup(func() { k.CloseHandle() })
	return k
}

func kindsInfo(t *testing.T, k *Kinds) KindsInfo {
	t.Helper()
	i, err := k.Info()
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	return i
}

func taken(t *testing.T, k *Kinds) []uint64 {
	t.Helper()
	var v []uint64
	for _, kind := range kindsInfo(t, k).Kinds {
		v = append(v, kind.Taken)
	}
	return v
}

func untilKindsWaiters(t *testing.T, k *Kinds, n uint64) {
	t.Helper()
	until(t, "waiters", n, func() uint64 { return kindsInfo(t, k).Waiters })
}

func TestVectorGrantIsAllOrNothing(t *testing.T) {
	k := mustKinds(t, 2, 100)
	if !k.TryAcquire([]int64{1, 60}) {
		t.Fatal("TryAcquire({1, 60}) of a new semaphore failed")
	}
	// A request slot is free, the bytes are not: nothing is taken.
	if k.TryAcquire([]int64{1, 50}) {
		t.Fatal("TryAcquire({1, 50}) granted with 40 bytes free")
	}
	if got := taken(t, k); !reflect.DeepEqual(got, []uint64{1, 60}) {
		t.Fatalf("taken after the refused try: %v", got)
	}
	done := make(chan error, 1)
	go func() { done <- k.Acquire(context.Background(), []int64{1, 50}) }()
	untilKindsWaiters(t, k, 1)
	if got := taken(t, k); !reflect.DeepEqual(got, []uint64{1, 60}) {
		t.Fatalf("taken while {1, 50} waits: %v", got)
	}
	k.Release([]int64{1, 60})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := taken(t, k); !reflect.DeepEqual(got, []uint64{1, 50}) {
		t.Fatalf("taken after the grant: %v", got)
	}
}

func TestHeadOfLineOverVectors(t *testing.T) {
	k := mustKinds(t, 4, 1000)
	if !k.TryAcquire([]int64{1, 500}) {
		t.Fatal("TryAcquire({1, 500})")
	}
	order := make(chan string, 2)
	acquire := func(name string, v []int64) {
		if err := k.Acquire(context.Background(), v); err != nil {
			order <- "error " + err.Error()
			return
		}
		order <- name
	}
	go acquire("big", []int64{1, 1000})
	untilKindsWaiters(t, k, 1)
	go acquire("small", []int64{1, 1})
	untilKindsWaiters(t, k, 2)
	// {1, 1} fits, yet waits behind the head that does not.
	if k.TryAcquire([]int64{1, 1}) {
		t.Fatal("TryAcquire({1, 1}) passed the head")
	}
	select {
	case name := <-order:
		t.Fatalf("%s granted while the head cannot be", name)
	default:
	}
	k.Release([]int64{1, 500})
	if first := <-order; first != "big" {
		t.Fatalf("first grant: %s", first)
	}
	if got := taken(t, k); !reflect.DeepEqual(got, []uint64{1, 1000}) {
		t.Fatalf("taken with the head granted: %v", got)
	}
	k.Release([]int64{1, 1000})
	if second := <-order; second != "small" {
		t.Fatalf("second grant: %s", second)
	}
}

func TestHolderKilledGivesItsVectorBack(t *testing.T) {
	k := mustKinds(t, 2, 1000)
	cmd := startHolder(t, "holdkinds", k.File())
	done := make(chan error, 1)
	go func() { done <- k.Acquire(context.Background(), []int64{2, 1000}) }()
	untilKindsWaiters(t, k, 1)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// Both kinds came back in one step: one grant of the whole of each.
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := taken(t, k); !reflect.DeepEqual(got, []uint64{2, 1000}) {
		t.Fatalf("taken after the kill: %v", got)
	}
}

func TestCancellationOfAVectorRequestLeavesTheQueue(t *testing.T) {
	k := mustKinds(t, 1, 100)
	if !k.TryAcquire([]int64{0, 100}) {
		t.Fatal("TryAcquire({0, 100})")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Acquire(ctx, []int64{1, 1}) }()
	untilKindsWaiters(t, k, 1)
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Acquire: %v, want context.Canceled", err)
	}
	i := kindsInfo(t, k)
	if i.Waiters != 0 || i.Kinds[0].Taken != 0 || i.Kinds[1].Taken != 100 {
		t.Fatalf("after the cancel: %+v", i)
	}
}

func TestCancellationWinsOverARacingVectorGrant(t *testing.T) {
	for round := 0; round < 50; round++ {
		k, err := NewKinds(Kind{"requests", 2}, Kind{"bytes", 10})
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Acquire(context.Background(), []int64{1, 5}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		released := make(chan struct{})
		go func() {
			for k.TryAcquire([]int64{1, 5}) { // until the Acquire below is queued
				k.Release([]int64{1, 5})
			}
			cancel()
			k.Release([]int64{1, 5})
			close(released)
		}()
		if err := k.Acquire(ctx, []int64{2, 10}); err != context.Canceled {
			t.Fatalf("round %d: Acquire racing its cancellation: %v, want context.Canceled", round, err)
		}
		<-released
		i := kindsInfo(t, k)
		if i.Waiters != 0 || i.Kinds[0].Available != 2 || i.Kinds[1].Available != 10 {
			t.Fatalf("round %d: the vector did not all come back: %+v", round, i)
		}
		k.CloseHandle()
	}
}

func TestAcquireOfAVectorWithADoneContextFails(t *testing.T) {
	k := mustKinds(t, 1, 100)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := k.Acquire(ctx, []int64{1, 1}); err != context.Canceled {
		t.Fatalf("Acquire: %v", err)
	}
	if got := taken(t, k); !reflect.DeepEqual(got, []uint64{0, 0}) {
		t.Fatalf("taken: %v", got)
	}
}

func TestLabelsAreInInfoAndNameTheKinds(t *testing.T) {
	k := mustKinds(t, 20, 1<<20)
	if got := k.Labels(); !reflect.DeepEqual(got, []string{"requests", "bytes"}) {
		t.Fatalf("Labels: %v", got)
	}
	i := kindsInfo(t, k)
	if b := i.Kind("bytes"); b == nil || b.Limit != 1<<20 {
		t.Fatalf("Kind(bytes): %+v", b)
	}
	v, err := k.Vector(map[string]int64{"bytes": 65536, "requests": 1})
	if err != nil || !reflect.DeepEqual(v, []int64{1, 65536}) {
		t.Fatalf("Vector: %v, %v", v, err)
	}
	if _, err := k.Vector(map[string]int64{"bodies": 1}); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Vector of an unknown label: %v", err)
	}
}

func TestABadLabelIsEINVAL(t *testing.T) {
	for _, bad := range []string{"has space", "sixteen-bytes-xx", "nul\x00inside", "a=b", "a,b"} {
		if _, err := NewKinds(Kind{"ok", 1}, Kind{bad, 1}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("label %q: %v", bad, err)
		}
	}
	if _, err := NewKinds(Kind{"same", 1}, Kind{"same", 1}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("two equal labels: %v", err)
	}
}

func TestCallsOfOneCountOnASemaphoreOfTwoKindsAreRefused(t *testing.T) {
	k := mustKinds(t, 3, 100)
	s, err := FromFile(k.File())
	if err != nil {
		t.Fatal(err)
	}
	var i sysInfoOne
	if err := sysInfoOneCall(k.main.fd, &i); err != nil {
		t.Fatal(err)
	}
	if i.limit != 3 || i.flags&infoKinds == 0 {
		t.Fatalf("INFO's kind 0: %+v", i)
	}
	if s.TryAcquire(1) {
		t.Fatal("scalar TryAcquire granted")
	}
	if err := s.AcquireInTurn(context.Background(), 1); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("scalar Acquire: %v", err)
	}
	if err := s.Add(1); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("scalar Add: %v", err)
	}
	if err := s.Remove(1); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("scalar Remove: %v", err)
	}
	if got := taken(t, k); !reflect.DeepEqual(got, []uint64{0, 0}) {
		t.Fatalf("taken: %v", got)
	}
}

func TestAVectorOfTheWrongLengthIsEINVAL(t *testing.T) {
	k := mustKinds(t, 3, 100)
	for _, v := range [][]int64{{1}, {1, 1, 1}, {-1, 1}} {
		if err := k.Acquire(context.Background(), v); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Acquire(%v): %v", v, err)
		}
	}
}

func TestAVectorOfZerosIsEINVAL(t *testing.T) {
	k := mustKinds(t, 3, 100)
	if err := k.Acquire(context.Background(), []int64{0, 0}); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Acquire({0, 0}): %v", err)
	}
}

func TestReleaseOfMoreThanHeldInAnyKindPanics(t *testing.T) {
	k := mustKinds(t, 3, 100)
	if !k.TryAcquire([]int64{2, 10}) {
		t.Fatal("TryAcquire")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
		if got := taken(t, k); !reflect.DeepEqual(got, []uint64{2, 10}) {
			t.Fatalf("taken after the refused release: %v", got)
		}
	}()
	k.Release([]int64{1, 11})
}

func TestAddAndRemoveMoveEachKindsLimit(t *testing.T) {
	k := mustKinds(t, 3, 100)
	if err := k.Add([]int64{1, 0}); err != nil {
		t.Fatal(err)
	}
	if err := k.Remove([]int64{0, 40}); err != nil {
		t.Fatal(err)
	}
	if err := k.Remove([]int64{1, 61}); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Remove above a kind's limit: %v", err)
	}
	if err := k.Add([]int64{1, MaxPermits}); !errors.Is(err, syscall.EOVERFLOW) {
		t.Fatalf("Add past MaxPermits: %v", err)
	}
	i := kindsInfo(t, k)
	if i.Kinds[0].Limit != 4 || i.Kinds[1].Limit != 60 {
		t.Fatalf("limits: %+v", i.Kinds)
	}
}

func TestForgetLowersEachKindsLimit(t *testing.T) {
	k := mustKinds(t, 3, 100)
	if !k.TryAcquire([]int64{1, 30}) {
		t.Fatal("TryAcquire")
	}
	if err := k.Forget([]int64{1, 30}); err != nil {
		t.Fatal(err)
	}
	i := kindsInfo(t, k)
	if i.Kinds[0].Limit != 2 || i.Kinds[1].Limit != 70 || i.Kinds[0].Taken != 0 || i.Kinds[1].Holds != 0 {
		t.Fatalf("after Forget: %+v", i.Kinds)
	}
}

func TestCloseFailsAWaitingVectorRequest(t *testing.T) {
	k := mustKinds(t, 1, 10)
	if !k.TryAcquire([]int64{1, 0}) {
		t.Fatal("TryAcquire")
	}
	done := make(chan error, 1)
	go func() { done <- k.Acquire(context.Background(), []int64{1, 1}) }()
	untilKindsWaiters(t, k, 1)
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire: %v", err)
	}
}

func TestStructsAreLaidOutAsTheUapiHeader(t *testing.T) {
	var (
		in sysInit
		ac sysAcquire
		c  sysCounts
		kd sysKind
		i  sysInfo
		r  sysReap
	)
	ours := map[string]uint64{
		"FAIRSEM_MAX_KINDS": MaxKinds, "FAIRSEM_LABEL_LEN": labelLen,
		"SIZEOF_fairsem_init":                    uint64(unsafe.Sizeof(in)),
		"OFFSETOF_fairsem_init_label":            uint64(unsafe.Offsetof(in.label)),
		"OFFSETOF_fairsem_init_flags":            uint64(unsafe.Offsetof(in.flags)),
		"OFFSETOF_fairsem_init_nkinds":           uint64(unsafe.Offsetof(in.nkinds)),
		"OFFSETOF_fairsem_init_reserved":         uint64(unsafe.Offsetof(in.reserved)),
		"SIZEOF_fairsem_acquire":                 uint64(unsafe.Sizeof(ac)),
		"OFFSETOF_fairsem_acquire_deadline_ns":   uint64(unsafe.Offsetof(ac.deadlineNs)),
		"OFFSETOF_fairsem_acquire_flags":         uint64(unsafe.Offsetof(ac.flags)),
		"OFFSETOF_fairsem_acquire_nkinds":        uint64(unsafe.Offsetof(ac.nkinds)),
		"OFFSETOF_fairsem_acquire_count":         uint64(unsafe.Offsetof(ac.count)),
		"SIZEOF_fairsem_counts":                  uint64(unsafe.Sizeof(c)),
		"OFFSETOF_fairsem_counts_nkinds":         uint64(unsafe.Offsetof(c.nkinds)),
		"OFFSETOF_fairsem_counts_flags":          uint64(unsafe.Offsetof(c.flags)),
		"OFFSETOF_fairsem_counts_count":          uint64(unsafe.Offsetof(c.count)),
		"SIZEOF_fairsem_kind":                    uint64(unsafe.Sizeof(kd)),
		"OFFSETOF_fairsem_kind_holds":            uint64(unsafe.Offsetof(kd.holds)),
		"OFFSETOF_fairsem_kind_label":            uint64(unsafe.Offsetof(kd.label)),
		"SIZEOF_fairsem_info_kinds":              uint64(unsafe.Sizeof(i)),
		"OFFSETOF_fairsem_info_kinds_id":         uint64(unsafe.Offsetof(i.id)),
		"OFFSETOF_fairsem_info_kinds_waiters":    uint64(unsafe.Offsetof(i.waiters)),
		"OFFSETOF_fairsem_info_kinds_flags":      uint64(unsafe.Offsetof(i.flags)),
		"OFFSETOF_fairsem_info_kinds_handles":    uint64(unsafe.Offsetof(i.handles)),
		"OFFSETOF_fairsem_info_kinds_nkinds":     uint64(unsafe.Offsetof(i.nkinds)),
		"OFFSETOF_fairsem_info_kinds_init_flags": uint64(unsafe.Offsetof(i.initFlags)),
		"OFFSETOF_fairsem_info_kinds_op_flags":   uint64(unsafe.Offsetof(i.opFlags)),
		"SIZEOF_fairsem_handle":                  uint64(unsafe.Sizeof(sysHandle{})),
		"SIZEOF_fairsem_link":                    uint64(unsafe.Sizeof(sysLink{})),
		"SIZEOF_fairsem_reap":                    uint64(unsafe.Sizeof(r)),
		"OFFSETOF_fairsem_reap_max":              uint64(unsafe.Offsetof(r.max)),
		"SIZEOF_fairsem_fast_release":            uint64(unsafe.Sizeof(sysFastRelease{})),
		"OFFSETOF_fairsem_fast_slot_inflight":    4, // fast.go's inflight: the slot's second u32
	}
	checkABI(t, ours)
}
