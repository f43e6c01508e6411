// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"context"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// Requests above the limit wait here, outside the kernel's queue, as
// x/sync's Weighted never queues a request larger than its size: queued,
// it would wait at the head and hold back every smaller request behind it.
//
// The kernel tells no one that a limit grew, so each semaphore with parked
// requests has one watcher goroutine that reads INFO through a handle of
// its own: at once when this process's Add or Close kicks it, else after
// 1 ms, doubling up to 50 ms while nothing changes.  It stops when nothing
// is parked.  Requests that now fit are queued by the watcher itself, in
// the order they parked, so that they reach the kernel's queue in arrival
// order.

const (
	parkPollMin = time.Millisecond
	parkPollMax = 50 * time.Millisecond
)

// parked is one Acquire waiting for the limit to cover n.
type parked struct {
	s    *Semaphore
	n    uint64
	done chan promoted // the watcher's submit of n, or EIDRM
}

// promoted is what the watcher's submit of a parked request gave: its
// waiter (nil: granted at once), or why it failed.
type promoted struct {
	w   *waiter
	err error
}

type parkedSem struct {
	reqs []*parked
	kick chan struct{}
}

type parkingLot struct {
	mu   sync.Mutex
	sems map[uint64]*parkedSem // by semaphore id
}

var lot = parkingLot{sems: map[uint64]*parkedSem{}}

func (l *parkingLot) count(id uint64) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ps := l.sems[id]; ps != nil {
		return uint64(len(ps.reqs))
	}
	return 0
}

func (ps *parkedSem) poke() {
	select {
	case ps.kick <- struct{}{}:
	default:
	}
}

// add parks p on semaphore id, starting its watcher with a handle opened
// from s if there is none.
func (l *parkingLot) add(s *Semaphore, id uint64, p *parked) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps := l.sems[id]
	if ps == nil {
		w, err := s.openHandle(false)
		if err != nil {
			return err
		}
		ps = &parkedSem{kick: make(chan struct{}, 1)}
		l.sems[id] = ps
		go l.watch(id, ps, w)
	}
	ps.reqs = append(ps.reqs, p)
	ps.poke() // the limit may have grown since the caller looked
	return nil
}

// remove takes p out; false if the watcher has already queued it.
func (l *parkingLot) remove(id uint64, p *parked) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps := l.sems[id]
	if ps == nil {
		return false
	}
	for k, q := range ps.reqs {
		if q == p {
			ps.reqs = append(ps.reqs[:k], ps.reqs[k+1:]...)
			return true
		}
	}
	return false
}

func (l *parkingLot) watch(id uint64, ps *parkedSem, w *handle) {
	delay := parkPollMin
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		var i sysInfoOne
		err := sysInfoOneCall(w.fd, &i)
		runtime.KeepAlive(w.f)
		l.mu.Lock()
		l.promote(ps, &i, err)
		if len(ps.reqs) == 0 {
			delete(l.sems, id)
			l.mu.Unlock()
			w.f.Close()
			return
		}
		l.mu.Unlock()
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(delay)
		select {
		case <-ps.kick:
			delay = parkPollMin
		case <-timer.C:
			if delay *= 2; delay > parkPollMax {
				delay = parkPollMax
			}
		}
	}
}

// promote queues, in order, the parked requests that fit the limit now;
// all of them fail on a closed semaphore or a failed INFO.  l.mu is held.
func (l *parkingLot) promote(ps *parkedSem, i *sysInfoOne, err error) {
	if err == nil && i.flags&infoClosed != 0 {
		err = syscall.EIDRM
	}
	keep := ps.reqs[:0]
	for _, p := range ps.reqs {
		switch {
		case err != nil:
			p.done <- promoted{err: errno("fairsem acquire", err)}
		case p.n <= i.limit:
			w, err := p.s.submit(p.n)
			p.done <- promoted{w: w, err: err}
		default:
			keep = append(keep, p)
		}
	}
	ps.reqs = keep
}

// park waits, outside the queue, for the limit to cover a request of n.
func (s *Semaphore) park(ctx context.Context, n uint64, id uint64) error {
	p := &parked{s: s, n: n, done: make(chan promoted, 1)}
	if err := lot.add(s, id, p); err != nil {
		return errno("fairsem acquire", err)
	}
	var r promoted
	select {
	case r = <-p.done:
	case <-ctx.Done():
		if lot.remove(id, p) {
			return ctx.Err()
		}
		r = <-p.done
	}
	switch {
	case r.err != nil:
		return r.err
	case r.w == nil: // granted as soon as queued; cancellation wins
		if ctx.Err() != nil {
			v := [MaxKinds]uint64{n}
			s.giveBack(&v)
			return ctx.Err()
		}
		return nil
	default:
		return s.await(ctx, r.w, s.giveBack)
	}
}

// kickParked: this process changed the semaphore (Add, Close); its
// watcher, if it has one, looks at once.
func (s *Semaphore) kickParked() {
	lot.mu.Lock()
	empty := len(lot.sems) == 0
	lot.mu.Unlock()
	if empty {
		return
	}
	var i sysInfoOne
	err := sysInfoOneCall(s.main.fd, &i)
	runtime.KeepAlive(s.main.f)
	if err != nil {
		return
	}
	lot.mu.Lock()
	if ps := lot.sems[i.id]; ps != nil {
		ps.poke()
	}
	lot.mu.Unlock()
}
