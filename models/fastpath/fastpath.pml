/*
 * SPDX-License-Identifier: GPL-2.0
 *
 * fairsem's shared-memory fast path, as a Promela model for spin.
 * models/fastpath/README.md is the protocol in prose and pseudo-code; this
 * file is what was model-checked.  models/fastpath/check.sh runs it and its
 * mutants.
 *
 * Three processes, two handles: P0 and P1 share handle H0 (fork or
 * SCM_RIGHTS), P2 has H1.  Each process maps the shared page once and so
 * has its own slot (one slot per mapping, VM_DONTCOPY): slot p is P p's.
 *
 *   W        = wfree (free permits) + wwait (WAITERS) + wrec (RECONCILE),
 *              one word: every access to it below is one atomic step
 *   holds[s] = fast-path permits held through slot s    (userspace writes)
 *   infl[s]  = fast paths under way in slot s           (userspace writes)
 *   kheld[h] = slow-path permits held by handle h       (kernel only)
 *
 * Kernel critical sections (under the semaphore's lock) are d_steps: the
 * lock is klock, and a section whose W updates cannot race a fast path
 * (a bit of W is set throughout, or it is one atomic RMW) is one step.
 * The slow acquire's enqueue is three steps, since the fast path may race
 * between them: that race is what the queuer's re-check of W is for.
 *
 * Configuration (-D on spin's command line):
 *   LIMIT    permits (2)            ITER    acquire+release rounds (1)
 *   MAXK     deaths (1)             MAXC    cancelled waits (1)
 *   MAXSTOP  SIGSTOPs (0)           NMAX    largest request (2: weighted)
 *   LIVE     add the liveness claim "every reconcile ends"
 *   MAXTRY   busy looks a reconcile may defer before its deadline (1)
 *   MAXFENCE fences in a run (no bound; a bound keeps safety runs small,
 *            while a reconcile that may not fence waits as before)
 *   STOP_FOREVER  a SIGSTOP may last for ever
 *   NOP2     P2 does not run (two users, P0 and P1, sharing H0)
 *   HOSTILE  add H, a bad writer with a fourth slot: it writes inflight = 1
 *            and never clears it; with REMAP, it unmaps and maps again at
 *            will (a new slot, each time a death)
 *   SIGBUS_HANDLED  a fenced process catches SIGBUS: a failed release is
 *            retried through RELEASE_FAST, then the process exits
 * Mutants, one per invariant (each must be caught; see check.sh):
 *   MUT_NO_RECHECK       the queuer does not re-check W after setting WAITERS
 *   MUT_READ_DEAD        a dead mapping's slot is read and given back
 *   MUT_LATE_INFLIGHT    inflight += 1 after the CAS (no full fence before it)
 *   MUT_EARLY_DONE       inflight -= 1 before holds is updated (no release)
 *   MUT_IGNORE_WAITERS   the fast acquire ignores WAITERS
 *   MUT_NO_WAIT          reconcile does not wait for quiescence
 *   MUT_WAIT_DEAD        reconcile waits on dead slots too
 *   MUT_SLOT_PER_HANDLE  one slot per handle, shared by P0 and P1
 *   MUT_NO_FENCE         no deadline: reconcile waits on a busy slot for ever
 *   MUT_FENCE_SKIP_HOLDS reconcile leaves a fenced slot's frozen holds out
 *   MUT_FENCE_SLOT_ONLY  the fence removes the slot's PTE, not W's: the
 *                        fenced process's CAS on W still lands
 *   MUT_FENCE_NO_STOP    the fence stops nothing (a flag, no PTE removed)
 *   MUT_FENCE_READ_EARLY the frozen holds are read when the slot is chosen,
 *                        before the PTEs are gone
 *   MUT_FENCE_WAIT       reconcile still waits for a fenced slot's inflight
 *   MUT_RELFAST_GIVES    RELEASE_FAST of a fenced slot gives to W while the
 *                        reconcile is still due (with SIGBUS_HANDLED)
 *   MUT_NO_DEBT          reconcile clamps a sum above the limit to W = 0
 *                        and forgets the excess (no debt)
 *   MUT_DEADLINE_PER_SLOT  the deadline is per slot (from when the slot was
 *                        first seen busy), not per reconcile
 */

#ifndef LIMIT
#define LIMIT 2
#endif
#ifndef ITER
#define ITER 1
#endif
#ifndef MAXK
#define MAXK 1
#endif
#ifndef MAXC
#define MAXC 1
#endif
#ifndef MAXSTOP
#define MAXSTOP 0
#endif
#ifndef NMAX
#define NMAX 2
#endif
#ifndef MAXTRY
#define MAXTRY 1
#endif
#ifndef MAXFENCE
#define MAXFENCE 9	/* no bound */
#endif

#define NPROC 3
#ifdef HOSTILE
#define NSLOT 4
#define HS 3		/* H's slot */
#else
#define NSLOT 3
#endif
#define NH 2
#define FAST 1
#define SLOW 2

byte wfree = LIMIT;
bit wwait;
bit wrec;
/* The kernel's debt: what a reconcile counted above the limit (a fenced
 * slot stopped between R4 and R5 is counted twice: in W and in its frozen
 * holds).  Every give pays it first; WAITERS stays set while it is owed. */
byte wdebt;

byte holds[NSLOT];
byte infl[NSLOT];
byte sref[NSLOT];	/* live mappings of slot s: the slot is live while > 0 */
/* The slot's mapping is fenced: its page-table entries (W's and the
 * slot's) are gone and the TLB flushed; its process's next access to either
 * faults.  The kernel still keeps the slot and reads its frozen holds. */
bit fenced[NSLOT];
/* The current reconcile's busy looks before its deadline; MAXTRY once the
 * deadline has passed (then every busy live slot is fenced). */
byte tries;
#if MAXFENCE < 9
byte nfences;
#define FENCE_AVAIL	(nfences < MAXFENCE)
#define FENCE_COUNT	nfences++
#else
#define FENCE_AVAIL	1
#define FENCE_COUNT	skip
#endif
#ifdef MUT_DEADLINE_PER_SLOT
byte stries[NSLOT];
#endif
#ifdef MUT_FENCE_READ_EARLY
byte frz[NSLOT];	/* holds read when the slot was chosen for the fence */
#endif
byte kheld[NH];
byte href[NH];		/* live processes holding handle h */

/* The kernel's FIFO queue: q[0..qlen-1] are process ids, qn[p] p's count. */
byte q[NPROC];
byte qlen;
byte qn[NPROC];
bit granted[NPROC];
bit klock;

bit pend;		/* a reconcile is due (a mapping died) */
byte ndone;
byte kills;
byte cancels;
byte nstops;
bit dead[NPROC];
byte sstop[NPROC];	/* 1: stopped, 2: stopped for ever */
bit inker[NPROC];	/* inside a kernel critical section: not killable */
bit sigkill[NPROC];
bit bus[NPROC];		/* SIGBUS: touched W or its slot after the fence */
bit pdone[NPROC];	/* finished its rounds (alive) */

/* Ghost: fast-path permits p's program is using: from the return of a
 * successful fast acquire until it calls release.  A dead process holds
 * nothing. */
byte ownf[NPROC];
/* Ghost: a fast path partway: taken from W by p's CAS and not yet in holds
 * (A4..A5), or given to W by p's CAS and still in holds (R4..R5). */
byte pacq[NPROC];
byte prel[NPROC];

#define HOF(p)	((p) < 2 -> 0 : 1)
#ifdef MUT_SLOT_PER_HANDLE
#define SOF(p)	HOF(p)
#else
#define SOF(p)	(p)
#endif

#define LIVEF(p)	(dead[p] -> 0 : ownf[p])
/* Permits taken by live programs and by handles (slow path). */
#define TAKEN	(LIVEF(0) + LIVEF(1) + LIVEF(2) + kheld[0] + kheld[1])
#define LHOLDS(s)	(sref[s] > 0 -> holds[s] : 0)
#ifdef HOSTILE
#define SUMLIVE	(LHOLDS(0) + LHOLDS(1) + LHOLDS(2) + LHOLDS(3))
#else
#define SUMLIVE	(LHOLDS(0) + LHOLDS(1) + LHOLDS(2))
#endif
/* What the reconcile counts for a live slot: its holds, a fenced one's
 * frozen holds included. */
#if defined(MUT_FENCE_SKIP_HOLDS)
#define RHOLDS(s)	(sref[s] > 0 && !fenced[s] -> holds[s] : 0)
#elif defined(MUT_FENCE_READ_EARLY)
#define RHOLDS(s)	(sref[s] > 0 -> (fenced[s] -> frz[s] : holds[s]) : 0)
#else
#define RHOLDS(s)	LHOLDS(s)
#endif
#ifdef HOSTILE
#define SUMREC	(RHOLDS(0) + RHOLDS(1) + RHOLDS(2) + RHOLDS(3))
#else
#define SUMREC	(RHOLDS(0) + RHOLDS(1) + RHOLDS(2))
#endif
/* A partway fast path counts while its slot is live and not fenced: a
 * fenced process never completes it, and the reconcile drops it. */
#define PLIVE(p)	(sref[SOF(p)] > 0 && !fenced[SOF(p)])
#define PACQ(p)	(PLIVE(p) -> pacq[p] : 0)
#define PREL(p)	(PLIVE(p) -> prel[p] : 0)
/* A fenced process stopped between R4 and R5 gave n to W, but its frozen
 * holds still count them: the kernel cannot tell R4 done from not done. */
#define PRELF(p)	(sref[SOF(p)] > 0 && fenced[SOF(p)] -> prel[p] : 0)
#define BOOKS	(wfree + SUMLIVE + kheld[0] + kheld[1] + PACQ(0) + PACQ(1) + PACQ(2))
#define OWED	(LIMIT + wdebt + PREL(0) + PREL(1) + PREL(2) + PRELF(0) + PRELF(1) + PRELF(2))
#define STUCK	(PRELF(0) + PRELF(1) + PRELF(2))

/*
 * The invariants.  Each carries a tag, a bit that is always 0, so that
 * pan's "assertion violated (...)" names the invariant for check.sh.
 */
#ifndef OFF_CONSERVED
#define OFF_CONSERVED 0
#endif
#ifndef OFF_EMPTY
#define OFF_EMPTY 0
#endif
#ifndef OFF_EXACT
#define OFF_EXACT 0
#endif
#ifndef OFF_IDLE
#define OFF_IDLE 0
#endif
/* -DOFF_CONSERVED=1 -DOFF_EMPTY=1 -DOFF_EXACT=1 -DOFF_IDLE=1 switch those off, to show that another
 * invariant catches a mutant on its own. */
bit inv_taken, inv_overtake, inv_granted, inv_paid;
bit inv_idle = OFF_IDLE;
bit inv_exact = OFF_EXACT;
bit inv_conserved = OFF_CONSERVED;
bit inv_empty = OFF_EMPTY;
/* Live programs and handles never hold more than the limit. */
#define INV_TAKEN	(inv_taken || TAKEN <= LIMIT)
/* A fast acquire succeeds only while nothing is queued. */
#define INV_NO_OVERTAKE	(inv_overtake || qlen == 0)
/* When the lock is dropped, the head never fits what is free (no lost
 * wakeup: the queuer re-checks, every release grants). */
#define INV_GRANTED	(inv_granted || qlen == 0 || qn[q[0]] > wfree)
/* At quiescence, free + live slots + handles == limit: whatever died,
 * at whatever instruction, its fast-path permits came back exactly. */
#define INV_CONSERVED	(inv_conserved || wfree + SUMLIVE + kheld[0] + kheld[1] == LIMIT)
/* ... and the live slots are empty (no permit stuck in a live slot). */
#define INV_SLOTS_EMPTY	(inv_empty || SUMLIVE == 0)
#define INV_IDLE	(inv_idle || (!wwait && !wrec && qlen == 0))
/* Whenever no reconcile is due, the kernel's books are exact: free + live
 * slots' holds (a fenced slot's frozen holds included) + handles + the fast
 * paths partway in live unfenced slots == limit, at every state, not only
 * at the end; except that a fenced slot stopped between R4 and R5 keeps
 * (STUCK) the permits it had already given to W, until RELEASE_FAST or its
 * death.  Never more: no permit made. */
#define INV_EXACT	(inv_exact || pend || (BOOKS <= OWED && BOOKS + STUCK >= OWED))
/* A fast acquire returns success only with its permits in its slot's
 * holds, and only through a slot that is not fenced. */
#define INV_PAID	(inv_paid || (!fenced[SOF(p)] && holds[SOF(p)] >= n))

/* The kernel gives n permits back: the debt first, then W. */
#define GIVE(x)	if :: wdebt >= (x) -> wdebt = wdebt - (x) :: else -> wfree = wfree + (x) - wdebt; wdebt = 0 fi

/* Remove q[i], shifting the rest up. */
inline rm_at(i)
{
	qn[q[i]] = 0;
	k = i;
	do
	:: k + 1 < qlen -> q[k] = q[k + 1]; k++
	:: else -> break
	od;
	qlen--;
	q[qlen] = 0
}

/* Grant from the head only, in order, while the head fits; the last one
 * out clears WAITERS (after the grants, so no fast CAS can slip between). */
inline grant_head()
{
	do
	:: qlen > 0 && qn[q[0]] <= wfree ->
		wfree = wfree - qn[q[0]];
		kheld[HOF(q[0])] = kheld[HOF(q[0])] + qn[q[0]];
		granted[q[0]] = 1;
		assert(INV_TAKEN);
		rm_at(0)
	:: else -> break
	od;
	if
	:: qlen == 0 && wdebt == 0 -> wwait = 0
	:: else -> skip
	fi
}

#if MAXSTOP > 0
/* SIGSTOP inside the fast path's window (inflight > 0): the only place a
 * stop can delay anyone else.  Cont() sends SIGCONT to a stop of kind 1;
 * with STOP_FOREVER, a stop may be of kind 2, for ever (only SIGKILL
 * ends it). */
#ifdef STOP_FOREVER
#define STOPKIND	if :: sstop[p] = 1 :: sstop[p] = 2 fi
#else
#define STOPKIND	sstop[p] = 1
#endif
#define STOP(t)	if :: nstops < MAXSTOP -> atomic { nstops++; STOPKIND }; end_stop_##t: sstop[p] == 0 :: else -> skip fi;
#else
#define STOP(t)
#endif

/* A step of the fast path that touches W or the slot, i.e. user memory of
 * the mapping: after the fence it faults (SIGBUS) and takes no effect. */
#ifdef SIGBUS_HANDLED
#define BUS	bus[p] = 1
#else
#define BUS	sigkill[p] = 1
#endif
#ifdef MUT_FENCE_NO_STOP
#define TOUCH(stmt)	d_step { stmt }
#define TOUCHW(stmt)	d_step { stmt }
#else
#define TOUCH(stmt)	d_step { if :: fenced[SOF(p)] -> BUS :: else -> stmt fi }
#ifdef MUT_FENCE_SLOT_ONLY
#define TOUCHW(stmt)	d_step { stmt }
#else
#define TOUCHW(stmt)	TOUCH(stmt)
#endif
#endif

/* The kernel half of a slow acquire (ioctl ACQUIRE): got = FAST never,
 * SLOW when granted, 0 when the wait was cancelled. */
inline slow_acquire()
{
	d_step {
		klock == 0 -> klock = 1; inker[p] = 1;
		if
		:: qlen == 0 && wfree >= n ->
			wfree = wfree - n;
			kheld[HOF(p)] = kheld[HOF(p)] + n;
			assert(INV_TAKEN);
			got = SLOW;
			klock = 0; inker[p] = 0
		:: else -> got = 0
		fi
	};
	if
	:: got == SLOW -> skip
	:: else ->
		/* Queue, and set WAITERS: from here on no fast path passes. */
		d_step { q[qlen] = p; qn[p] = n; qlen++; wwait = 1 };
		d_step {
#ifndef MUT_NO_RECHECK
			/* Re-check W: a fast release may have landed since
			 * the first look, before WAITERS was set. */
			grant_head();
#endif
			assert(INV_GRANTED);
			klock = 0; inker[p] = 0
		};
		/* Sleep until granted, or give up (timeout, signal).  A
		 * sleep may last for ever, validly: the permits may be held
		 * for good (by this very handle, for a co-user that died:
		 * slow-path permits belong to the handle).  A lost wakeup is
		 * caught by INV_GRANTED instead, at every unlock. */
end_asleep:
		if
		:: granted[p] -> granted[p] = 0; got = SLOW
		:: d_step {
			klock == 0 && !granted[p] && cancels < MAXC ->
			cancels++;
			j = 0;
			do
			:: q[j] == p -> break
			:: else -> j++
			od;
			rm_at(j);
			grant_head();
			assert(INV_GRANTED);
			got = 0
		   }
		fi
	fi
}

proctype P(byte p)
{
	byte it, n, got, j, k;
#ifdef SIGBUS_HANDLED
	bit inrel;
#define INREL(v)	; inrel = v
#else
#define INREL(v)
#endif

	{
	{
		do
		:: it < ITER ->
			if
			:: n = 1
			:: NMAX > 1 -> n = 2
			fi;
			/* ---- fast acquire ---- */
#ifndef MUT_LATE_INFLIGHT
			TOUCH(infl[SOF(p)]++);				/* A1 */
#endif
			STOP(a)
			/* CAS W from free to free - n if no bit is set and
			 * free >= n (a CAS loop is this one atomic step). */
			TOUCHW(						/* A2-A4 */
				if
#ifdef MUT_IGNORE_WAITERS
				:: !wrec && wfree >= n ->
#else
				:: !wrec && !wwait && wfree >= n ->
#endif
					wfree = wfree - n;
					pacq[p] = n;
					assert(INV_NO_OVERTAKE);
					got = FAST
				:: else -> got = 0
				fi
			);
			if
			:: got == FAST ->
#ifdef MUT_LATE_INFLIGHT
				TOUCH(infl[SOF(p)]++);
#endif
#ifdef MUT_EARLY_DONE
				TOUCH(infl[SOF(p)]--);
				TOUCH(holds[SOF(p)] = holds[SOF(p)] + n; pacq[p] = 0;
				      ownf[p] = n; assert(INV_PAID))
#else
				TOUCH(holds[SOF(p)] = holds[SOF(p)] + n;	/* A5 */
				      pacq[p] = 0);
				/* A6, and the return of success */
				TOUCH(infl[SOF(p)]--; ownf[p] = n; assert(INV_PAID))
#endif
			:: else ->
#ifndef MUT_LATE_INFLIGHT
				TOUCH(infl[SOF(p)]--);
#endif
				slow_acquire()
			fi;
			/* ---- release what was got, where it was got ---- */
			if
			:: got == FAST ->
				/* the call (the program stops using them),
				 * then R1 */
				d_step {
					ownf[p] = 0 INREL(1);
#ifdef MUT_FENCE_NO_STOP
					infl[SOF(p)]++
#else
					if
					:: fenced[SOF(p)] -> BUS
					:: else -> infl[SOF(p)]++
					fi
#endif
				};
				STOP(r)
				TOUCHW(					/* R2-R4 */
					if
					:: !wrec && !wwait ->
						wfree = wfree + n;
						prel[p] = n;
						got = FAST
					:: else -> got = 0
					fi
				);
				if
				:: got == FAST ->
#ifdef MUT_EARLY_DONE
					TOUCH(infl[SOF(p)]--);
					TOUCH(holds[SOF(p)] = holds[SOF(p)] - n; prel[p] = 0 INREL(0))
#else
					TOUCH(holds[SOF(p)] = holds[SOF(p)] - n; /* R5 */
					      prel[p] = 0);
					TOUCH(infl[SOF(p)]-- INREL(0))	/* R6 */
#endif
				:: else ->
					TOUCH(infl[SOF(p)]--);
					/* ioctl RELEASE_FAST of the mapping's
					 * fast-path permits */
					d_step {
						klock == 0 ->
						holds[SOF(p)] = holds[SOF(p)] - n;
						GIVE(n);
						grant_head();
						assert(INV_GRANTED)
						INREL(0)
					}
				fi
			:: got == SLOW ->
				/* ioctl RELEASE of the handle's permits */
				d_step {
					klock == 0 ->
					kheld[HOF(p)] = kheld[HOF(p)] - n;
					GIVE(n);
					grant_head();
					assert(INV_GRANTED)
				}
			:: else -> skip
			fi;
			it++
		:: else -> break
		od
	} unless {
		/* SIGBUS, caught (SIGBUS_HANDLED): the fast path failed.  A
		 * program that was releasing retries through RELEASE_FAST,
		 * which the kernel honours on a fenced mapping (EINVAL if the
		 * slot holds fewer); then the process exits. */
		bus[p] ->
#ifdef SIGBUS_HANDLED
		if
		:: inrel ->
			d_step {
				klock == 0 ->
				if
				:: holds[SOF(p)] >= n ->
					holds[SOF(p)] = holds[SOF(p)] - n;
					prel[p] = 0;
#ifndef MUT_RELFAST_GIVES
					/* A fenced slot while a reconcile is due:
					 * it may have given these to W already
					 * (R4) and the reconcile will count its
					 * holds; take from holds only, and let the
					 * reconcile give them. */
					if
					:: fenced[SOF(p)] && pend -> skip
					:: else ->
#endif
						GIVE(n);
						grant_head()
#ifndef MUT_RELFAST_GIVES
					fi;
#else
					;
#endif
					assert(INV_GRANTED)
				:: else -> skip		/* EINVAL */
				fi
			}
		:: else -> skip
		fi;
#endif
		/* (the outer escape is not taken from here: set dead too) */
		atomic { sigkill[p] = 1; dead[p] = 1 }
	}
	} unless {
		/* SIGKILL, sent by Killer() between any two steps of this
		 * process outside the kernel's lock (asleep in the queue or
		 * stopped included), or SIGBUS's default action.  An escape
		 * has priority: it is taken as soon as sigkill[p] is set;
		 * when is up to Killer() (or to the fence). */
		sigkill[p] -> dead[p] = 1
	};
	if
	:: dead[p] ->
		/* The exit path, under the lock: the interrupted wait leaves
		 * the queue (a grant that landed stays with the handle), the
		 * mapping closes, then the handle with its last process. */
		d_step {
			klock == 0 ->
			if
			:: qn[p] > 0 ->
				j = 0;
				do
				:: q[j] == p -> break
				:: else -> j++
				od;
				rm_at(j)
			:: else -> skip
			fi;
			granted[p] = 0;
			ownf[p] = 0;
			sref[SOF(p)]--;
			if
			:: sref[SOF(p)] == 0 ->
#ifdef MUT_READ_DEAD
				GIVE(holds[SOF(p)])
#else
				/* Do not read the dead slot: reconcile. */
				wrec = 1;
				pend = 1
#endif
			:: else -> skip
			fi;
			pacq[p] = 0;
			prel[p] = 0;
			href[HOF(p)]--;
			if
			:: href[HOF(p)] == 0 ->
				GIVE(kheld[HOF(p)]);
				kheld[HOF(p)] = 0
			:: else -> skip
			fi;
			grant_head();
			assert(INV_GRANTED);
			ndone++
		}
	:: else ->
		/* Done: the process lives on, idle, its mapping kept. */
		d_step { pdone[p] = 1; ndone++ }
	fi
}

/* The reconcile work item.  RECONCILE is set by the close; the wait for
 * quiescence is outside the lock and never blocks the kernel: a busy slot
 * defers the work, which retries, until the reconcile's deadline; from
 * then on a busy live slot is fenced instead, and not waited for.
 *
 * The deadline: the kernel measures the time since the reconcile became
 * due; here, a look at a busy slot may find the deadline passed at any
 * time, and must once the reconcile has deferred MAXTRY times (a retry is
 * a look that changes nothing, so any longer wait is the same interleaving
 * with Rec scheduled later).  It is per reconcile: a death while the
 * reconcile is due does not restart it. */
#ifdef MUT_DEADLINE_PER_SLOT
#define DEFER_OK	(stries[s] < MAXTRY || !FENCE_AVAIL)
#define DEFER		if :: stries[s] < MAXTRY -> stries[s]++ :: else -> skip fi
#define PASSED		skip
#else
#define DEFER_OK	(tries < MAXTRY || !FENCE_AVAIL)
#define DEFER		if :: tries < MAXTRY -> tries++ :: else -> skip fi
#define PASSED		tries = MAXTRY
#endif

proctype Rec()
{
	byte s, sum, j, k;

end:
	do
	:: pend ->
		s = 0;
#ifndef MUT_NO_WAIT
		do
		:: s < NSLOT ->
			if
#if defined(MUT_WAIT_DEAD)
			:: infl[s] == 0 || (sref[s] > 0 && fenced[s]) -> s++
			:: infl[s] > 0 && sref[s] == 0 -> skip	/* a dead one */
			:: infl[s] > 0 && sref[s] > 0 && !fenced[s] ->
#elif defined(MUT_FENCE_WAIT)
			:: sref[s] == 0 || infl[s] == 0 -> s++
			:: sref[s] > 0 && infl[s] > 0 ->
#else
			:: sref[s] == 0 || infl[s] == 0 || fenced[s] -> s++
			:: else ->
#endif
				/* live, busy (and not fenced) */
				if
#ifdef MUT_NO_FENCE
				:: skip			/* defer, retry */
#else
				:: DEFER_OK -> DEFER	/* defer, retry */
				:: atomic {
					FENCE_AVAIL ->
					/* the deadline has passed: the slot
					 * is chosen, the lock dropped */
					PASSED;
					FENCE_COUNT;
#ifdef MUT_FENCE_READ_EARLY
					frz[s] = holds[s]
#else
					skip
#endif
				   };
				   /* zap the mapping's PTEs (W's and the
				    * slot's), flush the TLB: from here its
				    * process's next access faults; the
				    * process may have moved since it was
				    * seen busy. */
				   fenced[s] = 1;
#ifndef MUT_FENCE_WAIT
				   s++
#else
				   skip
#endif
#endif
				fi
			fi
		:: else -> break
		od;
#endif
		/* atomic, not d_step: spin refuses a jump into a d_step */
		atomic {
			klock == 0 ->
			sum = SUMREC + kheld[0] + kheld[1];
			wfree = (sum > LIMIT -> 0 : LIMIT - sum);
#ifndef MUT_NO_DEBT
			wdebt = (sum > LIMIT -> sum - LIMIT : 0);
			if
			:: wdebt > 0 -> wwait = 1
			:: else -> skip
			fi;
#endif
			pend = 0;
			wrec = 0;
			tries = 0;
#ifdef MUT_DEADLINE_PER_SLOT
			s = 0;
			do
			:: s < NSLOT -> stries[s] = 0; s++
			:: else -> break
			od;
			s = 0;
#endif
			grant_head();
			assert(INV_GRANTED)
		}
	:: atomic {
		ndone == NPROC && !pend ->
		/* Every process done or dead, every death reconciled: the
		 * live slots are empty and every permit is back. */
		assert(INV_SLOTS_EMPTY);
		assert(INV_CONSERVED);
		assert(INV_IDLE)
	   };
#ifdef HOSTILE
		/* H never ends: the work stays, for H's next reconcile */
		ndone = NPROC + 1
#else
		break
#endif
	od
}

#ifdef HOSTILE
/* H, a bad writer: it maps the semaphore, writes inflight = 1 into its own
 * slot and never clears it (nor ever takes a permit); it may unmap and map
 * again, as often as it likes, and a fenced mapping's SIGBUS does not stop
 * it (it catches it, or another thread goes on).  Its slot's holds stay 0. */
proctype H()
{
end:
	do
	:: d_step { !fenced[HS] && infl[HS] == 0 -> infl[HS] = 1 }
#ifdef REMAP
	:: d_step {
		klock == 0 ->
		/* munmap: C1 for the old slot */
		wrec = 1;
		pend = 1;
#ifdef MUT_DEADLINE_PER_SLOT
		stries[HS] = 0;
#endif
		/* mmap: a new slot */
		holds[HS] = 0;
		infl[HS] = 0;
		fenced[HS] = 0
	   }
#endif
	od
}
#endif

#ifndef LIVE
/* The invariants that hold at every state, checked at every state: the
 * monitor's one statement is enabled only when one is broken. */
proctype Mon()
{
end:
	atomic {
		!(INV_TAKEN && INV_EXACT) ->
		assert(INV_TAKEN);
		assert(INV_EXACT)
	}
}
#endif

/* SIGKILL to any process, at any time outside its kernel sections. */
proctype Killer()
{
end:
	do
	:: atomic { kills < MAXK && !pdone[0] && !sigkill[0] && !inker[0] -> kills++; sigkill[0] = 1 }
	:: atomic { kills < MAXK && !pdone[1] && !sigkill[1] && !inker[1] -> kills++; sigkill[1] = 1 }
	:: atomic { kills < MAXK && !pdone[2] && !sigkill[2] && !inker[2] -> kills++; sigkill[2] = 1 }
	od
}

#if MAXSTOP > 0
/* SIGCONT, some time later. */
proctype Cont()
{
end:
	do
	:: sstop[0] == 1 -> sstop[0] = 0
	:: sstop[1] == 1 -> sstop[1] = 0
	:: sstop[2] == 1 -> sstop[2] = 0
	od
}
#endif

init
{
	atomic {
		href[0] = 2;
		sref[SOF(0)]++;
		sref[SOF(1)]++;
		run P(0);
		run P(1);
#ifdef NOP2
		/* two users only: P2 is done before it starts */
		pdone[2] = 1;
		ndone = 1;
#else
		href[1] = 1;
		sref[SOF(2)]++;
		run P(2);
#endif
		run Rec();
		run Killer();
#ifdef HOSTILE
		sref[HS] = 1;
		run H();
#endif
#ifndef LIVE
		run Mon();
#endif
#if MAXSTOP > 0
		run Cont();
#endif
	}
}

#ifdef LIVE
/* A reconcile that is due ends (with weak fairness: a process stopped
 * with sstop 1 is continued some time, a running one moves; one stopped
 * with sstop 2, or H, may hold inflight for ever). */
ltl reconcile_ends { [] (pend -> <> !pend) }
#endif
