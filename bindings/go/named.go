// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unsafe"
)

// DirDefault is where a semaphore name without a '/' lives, unless
// $FAIRSEM_DIR says otherwise.
const DirDefault = "/run/fairsem"

// How often OpenOrCreate goes round when the name comes and goes under it
// (open: ENOENT, create: EEXIST, open: ENOENT, ...) before EAGAIN, as
// libfairsem's fairsem_open_or_create().
const openOrCreateRounds = 64

// resolve: name itself when it has a '/', else $FAIRSEM_DIR/name.
func resolve(name string) (string, error) {
	if name == "" {
		return "", errno("fairsem open", syscall.EINVAL)
	}
	if strings.Contains(name, "/") {
		return name, nil
	}
	dir := os.Getenv("FAIRSEM_DIR")
	if dir == "" {
		dir = DirDefault
	}
	return dir + "/" + name, nil
}

// CreateNamed makes a semaphore of n permits served in the given order and
// names it: name (resolved as by OpenNamed) becomes a file with permission
// bits perm (at most 0777; the umask applies), owned by the caller.  The
// name appears only once the semaphore is fully set up, so no one opens a
// half-made one.  Errors are *os.PathError: EEXIST when the name is taken
// (nothing is made), ENOENT without the directory, ENOTTY when it is not a
// fairsem filesystem, EACCES, ENOSPC when the instance is full, EINVAL.
func CreateNamed(name string, n int64, order Order, perm os.FileMode) (*Semaphore, error) {
	if !order.valid() || perm&^0o777 != 0 {
		return nil, errno("fairsem create", syscall.EINVAL)
	}
	path, err := resolve(name)
	if err != nil {
		return nil, err
	}
	dir, base := filepath.Split(path)
	if base == "" {
		return nil, &os.PathError{Op: "fairsem create", Path: path, Err: syscall.EINVAL}
	}
	if dir == "" {
		dir = "."
	}
	dfd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(dfd)
	s, err := create(n, uint32(order))
	if err != nil {
		return nil, err
	}
	cname, err := syscall.BytePtrFromString(base)
	if err == nil {
		arg := sysLink{fd: int32(s.main.fd), mode: uint32(perm),
			name: uint64(uintptr(unsafe.Pointer(cname)))}
		_, err = ioctl(dfd, iocLink, unsafe.Pointer(&arg))
		runtime.KeepAlive(cname)
		runtime.KeepAlive(s.main.f)
	}
	if err != nil {
		s.CloseHandle()
		return nil, &os.PathError{Op: "fairsem link", Path: path, Err: err}
	}
	return s, nil
}

// OpenOrCreate opens the named semaphore, or makes it (n permits, order,
// perm, as CreateNamed) if there is no such name.  Race-free: however many
// processes race, exactly one creates it and all end up on the same
// semaphore.  An existing name's limit, order and mode are not compared
// with n, order and perm.
//
// A name that exists already is trusted only if it belongs to the
// caller's effective uid or to the directory's owner, or if others may not
// write to the directory: otherwise another user could have made it
// first, with a limit and a mode of their own, to hold every permit or
// close it (name squatting; the default instance is mode 1777).  Such a
// name is refused with an *OwnerError naming its owner, which matches
// syscall.EPERM, as fs.protected_regular refuses O_CREAT there.  Call
// OpenNamed to trust any owner.  EAGAIN when the name kept appearing and
// vanishing under it.
func OpenOrCreate(name string, n int64, order Order, perm os.FileMode) (*Semaphore, error) {
	if !order.valid() || perm&^0o777 != 0 {
		return nil, errno("fairsem create", syscall.EINVAL)
	}
	for round := 0; round < openOrCreateRounds; round++ {
		s, err := OpenNamed(name)
		if err == nil {
			if err := checkOwner(name, s); err != nil {
				s.CloseHandle()
				return nil, err
			}
			return s, nil
		}
		if !errors.Is(err, syscall.ENOENT) {
			return nil, err
		}
		s, err = CreateNamed(name, n, order, perm)
		if !errors.Is(err, syscall.EEXIST) {
			return s, err
		}
	}
	return nil, errno("fairsem open or create", syscall.EAGAIN)
}

// OwnerError is OpenOrCreate's refusal of a name someone else owns.
type OwnerError struct {
	Path  string
	Owner uint32 // the name's owner
	Dir   uint32 // the owner of its directory, which others may write to
	UID   uint32 // the caller's effective uid
}

func uidName(uid uint32) string {
	if u, err := user.LookupId(fmt.Sprint(uid)); err == nil {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("fairsem: %s belongs to %s, not to %s nor to the directory's owner, "+
		"and others may write to its directory: someone else may have made it first; "+
		"OpenNamed trusts any owner", e.Path, uidName(e.Owner), uidName(e.UID))
}

// Unwrap makes errors.Is(err, syscall.EPERM) true, as libfairsem's -EPERM.
func (e *OwnerError) Unwrap() error { return syscall.EPERM }

// checkOwner applies OpenOrCreate's rule to s, just opened as name: the
// fstat of the opened name, not a second lookup, so that the name cannot
// change between the check and the use.
func checkOwner(name string, s *Semaphore) error {
	path, err := resolve(name)
	if err != nil {
		return err
	}
	var fst, dst syscall.Stat_t
	err = syscall.Fstat(s.main.fd, &fst)
	runtime.KeepAlive(s.main.f)
	if err != nil {
		return &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	dir := filepath.Dir(path)
	if err := syscall.Stat(dir, &dst); err != nil {
		return &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	uid := uint32(os.Geteuid())
	if dst.Mode&syscall.S_IWOTH != 0 && fst.Uid != uid && fst.Uid != dst.Uid {
		return &OwnerError{Path: path, Owner: fst.Uid, Dir: dst.Uid, UID: uid}
	}
	return nil
}
