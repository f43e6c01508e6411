// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"context"
	"runtime"
	"sync"
	"syscall"
)

// Every Acquire of a Semaphore (or Kinds) that has to wait is a submitted
// request (FAIRSEM_IOC_SUBMIT) on one waiting handle, made at the first
// such Acquire: each waiter has its own id and its own place in the
// kernel's one queue, and the waiting handle is one descriptor however
// many goroutines wait.  One goroutine, the reaper, waits in the runtime's
// netpoller for that handle to turn readable, reaps the granted ids in the
// order the kernel granted them (FAIRSEM_IOC_REAP) and hands each grant to
// its waiter, in that order.  It starts with the first request queued and
// ends when a wakeup finds none queued (or at CloseHandle).

// reapBatch is how many ids one REAP asks for; the kernel may store fewer.
const reapBatch = 256

// waiter is one Acquire whose request is queued on the waiting handle.
type waiter struct {
	v    [MaxKinds]uint64
	id   uint32
	done chan error // nil: granted, held by the waiting handle; else why not
}

// waitq is a pool's waiting handle and its queued requests.  mu guards
// ids and reaping, and orders a submit before the reap of its id; it is
// taken before pool.mu.
type waitq[H pooled] struct {
	mu      sync.Mutex
	h       H
	made    bool
	ids     map[uint32]*waiter
	reaping bool
	ids0    []uint32                   // the reaper's buffer, on the heap
	held    func(H, *[MaxKinds]uint64) // counts a grant in H's holds; pool.mu held
}

// waiting is the waiting handle, made on the first call.  wq.mu is held.
func (p *pool[H]) waiting(mk func(*handle) H) (H, error) {
	wq := &p.wq
	if wq.made {
		return wq.h, nil
	}
	h, err := p.main.base().open(true)
	if err != nil {
		return wq.h, err
	}
	if h.rc == nil {
		h.f.Close()
		return wq.h, errno("fairsem acquire", syscall.EINVAL)
	}
	wq.h, wq.made = mk(h), true
	wq.ids = map[uint32]*waiter{}
	wq.ids0 = make([]uint32, reapBatch)
	p.mu.Lock()
	p.all = append(p.all, wq.h)
	p.mu.Unlock()
	return wq.h, nil
}

// submit queues v (nkinds counts) on the waiting handle: a nil waiter
// when it was granted at once (then held by the waiting handle), else the
// waiter to await.
func (p *pool[H]) submit(v *[MaxKinds]uint64, nkinds int, mk func(*handle) H,
	held func(H, *[MaxKinds]uint64)) (*waiter, error) {
	wq := &p.wq
	wq.mu.Lock()
	defer wq.mu.Unlock()
	h, err := p.waiting(mk)
	if err != nil {
		return nil, err
	}
	wq.held = held
	b := h.base()
	id, err := sysSubmit(b.fd, v, nkinds)
	runtime.KeepAlive(b.f)
	if err != nil {
		return nil, errno("fairsem acquire", err)
	}
	if id == 0 {
		p.mu.Lock()
		held(h, v)
		p.mu.Unlock()
		return nil, nil
	}
	w := &waiter{v: *v, id: id, done: make(chan error, 1)}
	wq.ids[id] = w
	if !wq.reaping {
		wq.reaping = true
		go p.reap()
	}
	return w, nil
}

// reap is the reaper: it hands out the grants until no request is queued,
// the semaphore is closed (every waiter fails with EIDRM) or the handle
// is closed (CloseHandle: they fail with its error).
func (p *pool[H]) reap() {
	wq := &p.wq
	b := wq.h.base()
	err := b.rc.Read(func(uintptr) bool {
		wq.mu.Lock()
		defer wq.mu.Unlock()
		if err := p.reapAll(b); err != nil {
			p.failAll(err)
		}
		if len(wq.ids) == 0 {
			wq.reaping = false
			return true
		}
		return false // wait for the next grant
	})
	if err != nil {
		wq.mu.Lock()
		p.failAll(err)
		wq.reaping = false
		wq.mu.Unlock()
	}
}

// reapAll reaps every grant made so far and hands each to its waiter in
// the kernel's order.  It reaps until EAGAIN: a reap may store fewer ids
// than it asked for while more grants wait (the kernel takes at most 64 a
// call), and the netpoller is edge-triggered, so grants left unreaped
// would wait for a wakeup that never comes.  wq.mu is held.
func (p *pool[H]) reapAll(b *handle) error {
	wq := &p.wq
	for {
		n, err := sysReapCall(b.fd, wq.ids0)
		runtime.KeepAlive(b.f)
		if err == syscall.EAGAIN {
			return nil
		}
		if err != nil {
			return err
		}
		for _, id := range wq.ids0[:n] {
			w := wq.ids[id]
			if w == nil {
				continue
			}
			delete(wq.ids, id)
			p.mu.Lock()
			wq.held(wq.h, &w.v)
			p.mu.Unlock()
			w.done <- nil
		}
	}
}

// failAll fails every queued waiter with err.  wq.mu is held.
func (p *pool[H]) failAll(err error) {
	for id, w := range p.wq.ids {
		delete(p.wq.ids, id)
		w.done <- err
	}
}

// await waits for w's grant or for ctx; cancellation wins, as x/sync's:
// ctx done before the grant is seen withdraws the request
// (FAIRSEM_IOC_WITHDRAW, which gives back a grant not reaped yet) or,
// when the grant was reaped already, gives it back (giveBack), and
// returns ctx.Err().
func (p *pool[H]) await(ctx context.Context, w *waiter, giveBack func(*[MaxKinds]uint64)) error {
	select {
	case err := <-w.done:
		if err != nil {
			return errno("fairsem acquire", err)
		}
		if ctx.Err() != nil {
			giveBack(&w.v)
			return ctx.Err()
		}
		return nil
	case <-ctx.Done():
	}
	if p.withdraw(w) {
		return ctx.Err()
	}
	if err := <-w.done; err == nil {
		giveBack(&w.v)
	}
	return ctx.Err()
}

// withdraw takes w's request out of the queue, true, or says it was
// reaped already (or failed), false: then w.done has the answer.
func (p *pool[H]) withdraw(w *waiter) bool {
	wq := &p.wq
	wq.mu.Lock()
	defer wq.mu.Unlock()
	if wq.ids[w.id] != w {
		return false
	}
	delete(wq.ids, w.id)
	b := wq.h.base()
	sysWithdraw(b.fd, w.id) // ENOENT: a close refused it already
	runtime.KeepAlive(b.f)
	return true
}

// queued is how many of this pool's requests wait on the waiting handle.
func (p *pool[H]) queued() int {
	p.wq.mu.Lock()
	defer p.wq.mu.Unlock()
	return len(p.wq.ids)
}
