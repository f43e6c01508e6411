/*
 * SPDX-License-Identifier: GPL-2.0
 *
 * fairsem's shared-memory fast path (issue 20), as a Promela model for spin.
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
 * Mutants, one per invariant (each must be caught; see check.sh):
 *   MUT_NO_RECHECK       the queuer does not re-check W after setting WAITERS
 *   MUT_READ_DEAD        a dead mapping's slot is read and given back
 *   MUT_LATE_INFLIGHT    inflight += 1 after the CAS (no full fence before it)
 *   MUT_EARLY_DONE       inflight -= 1 before holds is updated (no release)
 *   MUT_IGNORE_WAITERS   the fast acquire ignores WAITERS
 *   MUT_NO_WAIT          reconcile does not wait for quiescence
 *   MUT_WAIT_DEAD        reconcile waits on dead slots too
 *   MUT_SLOT_PER_HANDLE  one slot per handle, shared by P0 and P1
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

#define NPROC 3
#define NH 2
#define FAST 1
#define SLOW 2

byte wfree = LIMIT;
bit wwait;
bit wrec;

byte holds[NPROC];
byte infl[NPROC];
byte sref[NPROC];	/* live mappings of slot s: the slot is live while > 0 */
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
bit sstop[NPROC];
bit inker[NPROC];	/* inside a kernel critical section: not killable */
bit sigkill[NPROC];
bit pdone[NPROC];	/* finished its rounds (alive) */

/* Ghost: fast-path permits p holds, as its program sees them (linearized
 * at the CAS).  A dead process holds nothing. */
byte ownf[NPROC];

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
#define SUMLIVE	(LHOLDS(0) + LHOLDS(1) + LHOLDS(2))

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
/* -DOFF_CONSERVED=1 -DOFF_EMPTY=1 switch those off, to show that another
 * invariant catches a mutant on its own. */
bit inv_taken, inv_overtake, inv_granted, inv_idle;
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
	:: qlen == 0 -> wwait = 0
	:: else -> skip
	fi
}

#if MAXSTOP > 0
/* SIGSTOP inside the fast path's window (inflight > 0): the only place a
 * stop can delay anyone else.  Cont() sends SIGCONT. */
#define STOP	if :: nstops < MAXSTOP -> atomic { nstops++; sstop[p] = 1 }; !sstop[p] :: else -> skip fi;
#else
#define STOP
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

	{
		do
		:: it < ITER ->
			if
			:: n = 1
			:: NMAX > 1 -> n = 2
			fi;
			/* ---- fast acquire ---- */
#ifndef MUT_LATE_INFLIGHT
			infl[SOF(p)]++;
#endif
			STOP
			/* CAS W from free to free - n if no bit is set and
			 * free >= n (a CAS loop is this one atomic step). */
			d_step {
				if
#ifdef MUT_IGNORE_WAITERS
				:: !wrec && wfree >= n ->
#else
				:: !wrec && !wwait && wfree >= n ->
#endif
					wfree = wfree - n;
					ownf[p] = ownf[p] + n;
					assert(INV_NO_OVERTAKE);
					assert(INV_TAKEN);
					got = FAST
				:: else -> got = 0
				fi
			};
			if
			:: got == FAST ->
#ifdef MUT_LATE_INFLIGHT
				infl[SOF(p)]++;
#endif
#ifdef MUT_EARLY_DONE
				infl[SOF(p)]--;
				holds[SOF(p)] = holds[SOF(p)] + n
#else
				holds[SOF(p)] = holds[SOF(p)] + n;
				infl[SOF(p)]--
#endif
			:: else ->
#ifndef MUT_LATE_INFLIGHT
				infl[SOF(p)]--;
#endif
				slow_acquire()
			fi;
			/* ---- release what was got, where it was got ---- */
			if
			:: got == FAST ->
				infl[SOF(p)]++;
				STOP
				d_step {
					if
					:: !wrec && !wwait ->
						wfree = wfree + n;
						ownf[p] = ownf[p] - n;
						got = FAST
					:: else -> got = 0
					fi
				};
				if
				:: got == FAST ->
#ifdef MUT_EARLY_DONE
					infl[SOF(p)]--;
					holds[SOF(p)] = holds[SOF(p)] - n
#else
					holds[SOF(p)] = holds[SOF(p)] - n;
					infl[SOF(p)]--
#endif
				:: else ->
					infl[SOF(p)]--;
					/* ioctl RELEASE of the mapping's
					 * fast-path permits */
					d_step {
						klock == 0 ->
						holds[SOF(p)] = holds[SOF(p)] - n;
						ownf[p] = ownf[p] - n;
						wfree = wfree + n;
						grant_head();
						assert(INV_GRANTED)
					}
				fi
			:: got == SLOW ->
				/* ioctl RELEASE of the handle's permits */
				d_step {
					klock == 0 ->
					kheld[HOF(p)] = kheld[HOF(p)] - n;
					wfree = wfree + n;
					grant_head();
					assert(INV_GRANTED)
				}
			:: else -> skip
			fi;
			it++
		:: else -> break
		od
	} unless {
		/* SIGKILL, sent by Killer() between any two steps of this
		 * process outside the kernel's lock (asleep in the queue or
		 * stopped included).  An escape has priority: it is taken as
		 * soon as sigkill[p] is set; when is up to Killer(). */
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
			sref[SOF(p)]--;
			if
			:: sref[SOF(p)] == 0 ->
#ifdef MUT_READ_DEAD
				wfree = wfree + holds[SOF(p)]
#else
				/* Do not read the dead slot: reconcile. */
				wrec = 1;
				pend = 1
#endif
			:: else -> skip
			fi;
			href[HOF(p)]--;
			if
			:: href[HOF(p)] == 0 ->
				wfree = wfree + kheld[HOF(p)];
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
 * defers the work, which retries. */
proctype Rec()
{
	byte s, sum, j, k;

end:
	do
	:: pend ->
		s = 0;
#ifndef MUT_NO_WAIT
		do
		:: s < NPROC ->
			if
#ifdef MUT_WAIT_DEAD
			:: infl[s] == 0 -> s++
#else
			:: sref[s] == 0 || infl[s] == 0 -> s++
#endif
			:: else -> skip	/* busy: defer, retry */
			fi
		:: else -> break
		od;
#endif
		/* atomic, not d_step: spin refuses a jump into a d_step */
		atomic {
			klock == 0 ->
			sum = SUMLIVE + kheld[0] + kheld[1];
			wfree = (sum > LIMIT -> 0 : LIMIT - sum);
			pend = 0;
			wrec = 0;
			assert(INV_TAKEN);
			grant_head();
			assert(INV_GRANTED)
		}
	:: ndone == NPROC && !pend ->
		/* Every process done or dead, every death reconciled: the
		 * live slots are empty and every permit is back. */
		assert(INV_SLOTS_EMPTY);
		assert(INV_CONSERVED);
		assert(INV_IDLE);
		break
	od
}

/* SIGKILL to any process, at any time outside its kernel sections. */
proctype Killer()
{
end:
	do
	:: atomic { kills < MAXK && !pdone[0] && !dead[0] && !inker[0] -> kills++; sigkill[0] = 1 }
	:: atomic { kills < MAXK && !pdone[1] && !dead[1] && !inker[1] -> kills++; sigkill[1] = 1 }
	:: atomic { kills < MAXK && !pdone[2] && !dead[2] && !inker[2] -> kills++; sigkill[2] = 1 }
	od
}

#if MAXSTOP > 0
/* SIGCONT, some time later. */
proctype Cont()
{
end:
	do
	:: sstop[0] -> sstop[0] = 0
	:: sstop[1] -> sstop[1] = 0
	:: sstop[2] -> sstop[2] = 0
	od
}
#endif

init
{
	atomic {
		href[0] = 2;
		href[1] = 1;
		sref[SOF(0)]++;
		sref[SOF(1)]++;
		sref[SOF(2)]++;
		run P(0);
		run P(1);
		run P(2);
		run Rec();
		run Killer();
#if MAXSTOP > 0
		run Cont();
#endif
	}
}

#ifdef LIVE
/* A reconcile that is due ends (with weak fairness: a sstop process is
 * continued some time, a running one moves). */
ltl reconcile_ends { [] (pend -> <> !pend) }
#endif
