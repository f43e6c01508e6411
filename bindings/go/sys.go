// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"syscall"
	"unsafe"
)

// The ABI of uapi/linux/fairsem.h.
const (
	MaxPermits = 1 << 62 // FAIRSEM_MAX_PERMITS
	noDeadline = ^uint64(0)

	flagLIFO      = 1 << 0 // FAIRSEM_LIFO
	flagPrio      = 1 << 4 // FAIRSEM_PRIO
	flagJobserver = 1 << 6 // FAIRSEM_JOBSERVER
	flagFast      = 1 << 7 // FAIRSEM_FAST

	// ACQUIRE's, RELEASE's, RESIZE's and NEW_HANDLE's flags, one space.
	acqTry        = 1 << 0 // FAIRSEM_ACQ_TRY
	releaseForget = 1 << 2 // FAIRSEM_RELEASE_FORGET
	resizeAdd     = 1 << 3 // FAIRSEM_RESIZE_ADD
	resizeRemove  = 1 << 4 // FAIRSEM_RESIZE_REMOVE
	handleGovern  = 1 << 5 // FAIRSEM_HANDLE_GOVERN

	infoClosed = 1 << 1 // FAIRSEM_INFO_CLOSED
	infoKinds  = 1 << 5 // FAIRSEM_INFO_KINDS

	fastMapPages   = 2          // FAIRSEM_FAST_MAP_PAGES
	fastMaxPermits = 0x7fffffff // FAIRSEM_FAST_MAX_PERMITS
	fastFree       = 0xffffffff // FAIRSEM_FAST_FREE: W's free permits
	fastWaiters    = 1 << 32    // FAIRSEM_FAST_WAITERS
	fastReconcile  = 1 << 33    // FAIRSEM_FAST_RECONCILE
	fastBits       = fastWaiters | fastReconcile

	MaxKinds = 8  // FAIRSEM_MAX_KINDS
	labelLen = 16 // FAIRSEM_LABEL_LEN, the NUL included
)

// Every count is a vector: inline, MaxKinds long, nkinds used, the tail
// zero.  A semaphore of one count is a vector of one.  In ACQUIRE's,
// RELEASE's, RESIZE's and SUBMIT's arguments the counts come last, and
// the kernel reads the first nkinds alone.

type sysInit struct {
	limit    [MaxKinds]uint64
	label    [MaxKinds][labelLen]byte
	flags    uint32
	nkinds   uint32
	reserved uint64
}

type sysAcquire struct {
	deadlineNs uint64
	flags      uint32
	nkinds     uint32
	count      [MaxKinds]uint64
}

// sysCounts is RELEASE's (flags 0 or releaseForget), RESIZE's (resizeAdd
// or resizeRemove) and SUBMIT's (0) argument.
type sysCounts struct {
	nkinds uint32
	flags  uint32
	count  [MaxKinds]uint64
}

type sysFastRelease struct {
	addr     uint64 // an address inside a mapping of the handle
	count    uint64
	reserved uint64
}

type sysHandle struct {
	flags uint32
	fd    int32
}

type sysLink struct {
	fd       int32
	mode     uint32
	name     uint64 // user pointer to a NUL-terminated name
	reserved [2]uint64
}

type sysReap struct {
	ids      uint64 // user pointer to max __u32
	max      uint32
	reserved uint32
}

type sysKind struct {
	limit, available, taken, holds uint64
	label                          [labelLen]byte
}

// sysInfo is struct fairsem_info_kinds, INFO's result: nkinds 0 on a
// handle not bound yet, of which only initFlags and opFlags are filled,
// the flags this kernel's INIT, and ACQUIRE, RELEASE and RESIZE, accept.
type sysInfo struct {
	kind                             [MaxKinds]sysKind
	id, waiters                      uint64
	flags, handles, nkinds, reserved uint32
	initFlags, opFlags               uint32
	reserved2                        uint64
}

func ioc(dir, nr, size uintptr) uintptr {
	return dir<<30 | size<<16 | 0xFA<<8 | nr
}

var (
	iocInit        = ioc(1, 0, unsafe.Sizeof(sysInit{}))
	iocAcquire     = ioc(1, 1, unsafe.Sizeof(sysAcquire{}))
	iocRelease     = ioc(1, 2, unsafe.Sizeof(sysCounts{}))
	iocResize      = ioc(1, 3, unsafe.Sizeof(sysCounts{}))
	iocClose       = ioc(0, 4, 0)
	iocInfo        = ioc(2, 5, unsafe.Sizeof(sysInfo{}))
	iocNewHandle   = ioc(3, 6, unsafe.Sizeof(sysHandle{}))
	iocLink        = ioc(1, 7, unsafe.Sizeof(sysLink{}))
	iocSubmit      = ioc(1, 8, unsafe.Sizeof(sysCounts{}))
	iocReap        = ioc(1, 9, unsafe.Sizeof(sysReap{}))
	iocWithdraw    = ioc(1, 10, 4)
	iocReleaseFast = ioc(1, 11, unsafe.Sizeof(sysFastRelease{}))
)

func ioctl(fd int, req uintptr, arg unsafe.Pointer) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// rawIoctl is for the ioctls of the hot path, which never sleep (a try
// acquire, a release, a withdraw, INFO): telling the
// scheduler about a blocking call would only cost time on every Acquire
// and Release.  INIT, NEW_HANDLE and LINK allocate and go through ioctl.
func rawIoctl(fd int, req uintptr, arg unsafe.Pointer) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

// sysAcquireCall: ACQUIRE of the vector v, n kinds, without a deadline
// (a try: it never sleeps).
func sysAcquireCall(fd int, v *[MaxKinds]uint64, n int, flags uint32) error {
	arg := sysAcquire{count: *v, deadlineNs: noDeadline, flags: flags, nkinds: uint32(n)}
	return rawIoctl(fd, iocAcquire, unsafe.Pointer(&arg))
}

// sysAcquireOne is sysAcquireCall of a vector of one, count.
func sysAcquireOne(fd int, count uint64, flags uint32) error {
	arg := sysAcquire{deadlineNs: noDeadline, flags: flags, nkinds: 1}
	arg.count[0] = count
	return rawIoctl(fd, iocAcquire, unsafe.Pointer(&arg))
}

// sysCountsCall: RELEASE or RESIZE (req) of the vector v, n kinds, with
// flags.
func sysCountsCall(fd int, req uintptr, v *[MaxKinds]uint64, n int, flags uint32) error {
	arg := sysCounts{count: *v, nkinds: uint32(n), flags: flags}
	return rawIoctl(fd, req, unsafe.Pointer(&arg))
}

// sysCountOne is sysCountsCall of a vector of one, count.
func sysCountOne(fd int, req uintptr, count uint64, flags uint32) error {
	arg := sysCounts{nkinds: 1, flags: flags}
	arg.count[0] = count
	return rawIoctl(fd, req, unsafe.Pointer(&arg))
}

// sysInfoCall: INFO on any handle; nkinds 0 when it is not bound yet.
func sysInfoCall(fd int, i *sysInfo) error {
	return rawIoctl(fd, iocInfo, unsafe.Pointer(i))
}

// sysInfoBound: INFO of a handle's semaphore, EBADFD when it has none.
func sysInfoBound(fd int, i *sysInfo) error {
	if err := sysInfoCall(fd, i); err != nil {
		return err
	}
	if i.nkinds == 0 {
		return syscall.EBADFD
	}
	return nil
}

// sysSubmit queues one submitted request (FAIRSEM_IOC_SUBMIT): 0 when
// granted at once, else its id.  It allocates, so it is no raw call.
func sysSubmit(fd int, v *[MaxKinds]uint64, n int) (uint32, error) {
	arg := sysCounts{count: *v, nkinds: uint32(n)}
	id, err := ioctl(fd, iocSubmit, unsafe.Pointer(&arg))
	return uint32(id), err
}

// sysReapCall stores the ids of granted submitted requests in ids, oldest
// grant first, and says how many (FAIRSEM_IOC_REAP): EAGAIN none, EIDRM
// closed.
func sysReapCall(fd int, ids []uint32) (int, error) {
	arg := sysReap{ids: uint64(uintptr(unsafe.Pointer(&ids[0]))), max: uint32(len(ids))}
	n, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(fd), iocReap, uintptr(unsafe.Pointer(&arg)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// sysWithdraw withdraws submitted request id (FAIRSEM_IOC_WITHDRAW); a
// grant not reaped goes back with it.  ENOENT: no such request.
func sysWithdraw(fd int, id uint32) error {
	return rawIoctl(fd, iocWithdraw, unsafe.Pointer(&id))
}

// sysInfoOne is kind 0 of INFO, what a Semaphore reports (libfairsem's
// struct fairsem_info): flags has infoKinds when there are more kinds.
type sysInfoOne struct {
	id, limit, available, taken, holds, waiters uint64
	flags, handles                              uint32
}

// sysInfoOneCall: INFO's kind 0 of the handle's semaphore, EBADFD when it
// has none.
func sysInfoOneCall(fd int, o *sysInfoOne) error {
	var i sysInfo
	if err := sysInfoBound(fd, &i); err != nil {
		return err
	}
	k := &i.kind[0]
	*o = sysInfoOne{id: i.id, limit: k.limit, available: k.available, taken: k.taken,
		holds: k.holds, waiters: i.waiters, flags: i.flags, handles: i.handles}
	if i.nkinds > 1 {
		o.flags |= infoKinds
	}
	return nil
}
