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

	flagLIFO         = 1 << 0 // FAIRSEM_LIFO
	flagPrio         = 1 << 4 // FAIRSEM_PRIO
	acqTry           = 1 << 0 // FAIRSEM_ACQ_TRY
	acqAsync         = 1 << 1 // FAIRSEM_ACQ_ASYNC
	infoClosed       = 1 << 1 // FAIRSEM_INFO_CLOSED
	infoAsyncPending = 1 << 2 // FAIRSEM_INFO_ASYNC_PENDING
	infoAsyncGranted = 1 << 3 // FAIRSEM_INFO_ASYNC_GRANTED
	infoKinds        = 1 << 5 // FAIRSEM_INFO_KINDS
	flagFast         = 1 << 7 // FAIRSEM_FAST

	fastMapPages   = 2          // FAIRSEM_FAST_MAP_PAGES
	fastMaxPermits = 0x7fffffff // FAIRSEM_FAST_MAX_PERMITS
	fastFree       = 0xffffffff // FAIRSEM_FAST_FREE: W's free permits
	fastWaiters    = 1 << 32    // FAIRSEM_FAST_WAITERS
	fastReconcile  = 1 << 33    // FAIRSEM_FAST_RECONCILE
	fastBits       = fastWaiters | fastReconcile

	MaxKinds = 8  // FAIRSEM_MAX_KINDS
	labelLen = 16 // FAIRSEM_LABEL_LEN, the NUL included
)

type sysInit struct {
	permits  uint64
	flags    uint32
	reserved uint32
}

type sysAcquire struct {
	count      uint64
	deadlineNs uint64
	flags      uint32
	reserved   uint32
}

type sysInfo struct {
	id, limit, available, taken, holds, waiters uint64
	flags, handles                              uint32
	reserved                                    [4]uint64
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

// The kinds structs: every vector inline, MaxKinds long, the tail zero.
type sysInitKinds struct {
	limit    [MaxKinds]uint64
	label    [MaxKinds][labelLen]byte
	flags    uint32
	nkinds   uint32
	reserved uint64
}

type sysAcquireKinds struct {
	count      [MaxKinds]uint64
	deadlineNs uint64
	flags      uint32
	nkinds     uint32
	reserved   uint64
}

type sysCounts struct {
	count    [MaxKinds]uint64
	nkinds   uint32
	reserved uint32
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

type sysInfoKinds struct {
	kind                             [MaxKinds]sysKind
	id, waiters                      uint64
	flags, handles, nkinds, reserved uint32
	reserved2                        [2]uint64
}

func ioc(dir, nr, size uintptr) uintptr {
	return dir<<30 | size<<16 | 0xFA<<8 | nr
}

var (
	iocInit      = ioc(1, 0, unsafe.Sizeof(sysInit{}))
	iocAcquire   = ioc(1, 1, unsafe.Sizeof(sysAcquire{}))
	iocRelease   = ioc(1, 2, 8)
	iocForget    = ioc(1, 3, 8)
	iocAdd       = ioc(1, 4, 8)
	iocRemove    = ioc(1, 5, 8)
	iocClose     = ioc(0, 6, 0)
	iocCancel    = ioc(0, 7, 0)
	iocInfo      = ioc(2, 8, unsafe.Sizeof(sysInfo{}))
	iocNewHandle = ioc(3, 9, unsafe.Sizeof(sysHandle{}))
	iocLink      = ioc(1, 10, unsafe.Sizeof(sysLink{}))

	iocInitKinds    = ioc(1, 11, unsafe.Sizeof(sysInitKinds{}))
	iocAcquireKinds = ioc(1, 12, unsafe.Sizeof(sysAcquireKinds{}))
	iocReleaseKinds = ioc(1, 13, unsafe.Sizeof(sysCounts{}))
	iocForgetKinds  = ioc(1, 14, unsafe.Sizeof(sysCounts{}))
	iocAddKinds     = ioc(1, 15, unsafe.Sizeof(sysCounts{}))
	iocRemoveKinds  = ioc(1, 16, unsafe.Sizeof(sysCounts{}))
	iocInfoKinds    = ioc(2, 17, unsafe.Sizeof(sysInfoKinds{}))

	iocSubmit   = ioc(1, 18, unsafe.Sizeof(sysCounts{}))
	iocReap     = ioc(1, 19, unsafe.Sizeof(sysReap{}))
	iocWithdraw = ioc(1, 20, 4)

	iocReleaseFast = ioc(1, 21, unsafe.Sizeof(sysFastRelease{}))
)

func ioctl(fd int, req uintptr, arg unsafe.Pointer) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// rawIoctl is for the ioctls of the hot path, which never sleep (an
// asynchronous or try acquire, a release, a cancel, INFO): telling the
// scheduler about a blocking call would only cost time on every Acquire
// and Release.  INIT, NEW_HANDLE and LINK allocate and go through ioctl.
func rawIoctl(fd int, req uintptr, arg unsafe.Pointer) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

func ioctlCount(fd int, req uintptr, count uint64) error {
	return rawIoctl(fd, req, unsafe.Pointer(&count))
}

func sysAcquireCall(fd int, count uint64, flags uint32) error {
	arg := sysAcquire{count: count, deadlineNs: noDeadline, flags: flags}
	return rawIoctl(fd, iocAcquire, unsafe.Pointer(&arg))
}

func sysInfoCall(fd int, i *sysInfo) error {
	return rawIoctl(fd, iocInfo, unsafe.Pointer(i))
}

func sysAcquireKindsCall(fd int, v *[MaxKinds]uint64, n int, flags uint32) error {
	arg := sysAcquireKinds{count: *v, deadlineNs: noDeadline, flags: flags, nkinds: uint32(n)}
	return rawIoctl(fd, iocAcquireKinds, unsafe.Pointer(&arg))
}

func sysCountsCall(fd int, req uintptr, v *[MaxKinds]uint64, n int) error {
	arg := sysCounts{count: *v, nkinds: uint32(n)}
	return rawIoctl(fd, req, unsafe.Pointer(&arg))
}

func sysInfoKindsCall(fd int, i *sysInfoKinds) error {
	return rawIoctl(fd, iocInfoKinds, unsafe.Pointer(i))
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
