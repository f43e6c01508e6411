// SPDX-License-Identifier: GPL-2.0
/*
 * The fairsem filesystem: names for semaphores.
 *
 * Every mount is an instance of its own (like a new devpts instance or
 * binderfs), with a flat root directory that holds only semaphores.  A
 * name is a regular file whose inode holds a reference on its semaphore;
 * open() of it makes a new handle on that semaphore, as NEW_HANDLE would.
 * Names are made by FAIRSEM_IOC_LINK on the root directory, only ever for
 * a semaphore that INIT has fully set up; unlink, rename, chmod, chown,
 * stat and readdir are the VFS's own.  So permissions, ownership, the
 * sticky bit, security modules and mount namespaces all decide who may
 * reach a semaphore, as they do for any file.  No POSIX ACLs, as in ramfs:
 * no xattr handlers and no ->set_acl, so the VFS answers EOPNOTSUPP.
 *
 * Names are dentries pinned in the dcache, as in ramfs.  A semaphore lives
 * while it has a name (its inode's reference) or a handle (each handle's
 * reference).  Dentries and inodes come from the VFS's accounted caches
 * and the semaphore from INIT's GFP_KERNEL_ACCOUNT allocation: all of it
 * is charged to the memory cgroup of whoever created it.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/fsnotify.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/security.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <uapi/linux/fairsem.h>

#include "fairsem_dev.h"
#include "fairsem_fs.h"
#include "fairsem_fs_compat.h"
#include "fairsem_handle.h"

#define FAIRSEM_FS_DEFAULT_MODE	01777	/* anyone creates, owners remove */
#define FAIRSEM_FS_DEFAULT_MAX	4096
/* max_per_user= by default: a quarter of max=, so no one user takes all. */
#define FAIRSEM_FS_PER_USER_SHARE	4

/**
 * struct fairsem_fs_info - one instance (sb->s_fs_info)
 * @mode: the root directory's mode, from mode=
 * @uid: its owner, from uid= (default: the mounter)
 * @gid: its group, from gid= (default: the mounter's)
 * @max: the most names the instance may hold, from max=
 * @max_per_user: the most names one owner may hold, from max_per_user=
 *	(default: a quarter of @max, rounded up), the root directory's owner
 *	excepted; guarded as @names
 * @names: names it holds now; guarded by the root inode's i_rwsem, which
 *	the VFS holds over unlink and rename and LINK takes itself, as @max
 *	is (a remount changes it)
 * @given: in a mount's or a remount's fs_context only: the options it
 *	named, a bit for each FAIRSEM_OPT_*, so that a remount changes those
 *	and no others; in the instance's, the options ever given
 * @users: how many names each owner holds: the value of the index
 *	__kuid_val(owner), absent for none
 * @users_lock: guards @users' counts (LINK and unlink change them under
 *	the root inode's i_rwsem, chown under the name's own)
 */
struct fairsem_fs_info {
	umode_t mode;
	kuid_t uid;
	kgid_t gid;
	unsigned int max;
	unsigned int max_per_user;
	unsigned int names;
	unsigned int given;
	struct xarray users;
	struct mutex users_lock;	/* see above */
};

enum {
	FAIRSEM_OPT_MODE,
	FAIRSEM_OPT_UID,
	FAIRSEM_OPT_GID,
	FAIRSEM_OPT_MAX,
	FAIRSEM_OPT_MAX_PER_USER,
};

/* Unless max_per_user= was ever given, it follows max=. */
static void fairsem_set_max(struct fairsem_fs_info *fsi, unsigned int max)
{
	fsi->max = max;
	if (!(fsi->given & BIT(FAIRSEM_OPT_MAX_PER_USER)))
		fsi->max_per_user = max / FAIRSEM_FS_PER_USER_SHARE +
				    !!(max % FAIRSEM_FS_PER_USER_SHARE);
}

static struct file_system_type fairsem_fs_type;

/*
 * The operations of a handle, which an open of a name becomes and which
 * LINK takes a descriptor of: the device's, given at registration.
 */
static const struct file_operations *fairsem_handle_fops;

/* ---- names per owner ---- */

/* Under users_lock: the names @uid owns. */
static unsigned long fairsem_user_names(struct fairsem_fs_info *fsi, kuid_t uid)
{
	void *entry = xa_load(&fsi->users, __kuid_val(uid));

	return entry ? xa_to_value(entry) : 0;
}

/*
 * One more name owned by @uid: EDQUOT at max_per_user, unless @over_bound
 * (the root directory's owner; chown, which only the privileged may do to
 * another's name, moves a name whatever its new owner holds), ENOMEM if
 * it cannot be counted.
 */
static int fairsem_user_charge(struct fairsem_fs_info *fsi, kuid_t uid,
			       bool over_bound)
{
	unsigned long n;
	int ret = -EDQUOT;

	mutex_lock(&fsi->users_lock);
	n = fairsem_user_names(fsi, uid);
	if (over_bound || n < fsi->max_per_user)
		ret = xa_err(xa_store(&fsi->users, __kuid_val(uid),
				      xa_mk_value(n + 1), GFP_KERNEL_ACCOUNT));
	mutex_unlock(&fsi->users_lock);
	return ret;
}

/* One name fewer owned by @uid; replacing a present entry allocates nothing. */
static void fairsem_user_uncharge(struct fairsem_fs_info *fsi, kuid_t uid)
{
	unsigned long n;

	mutex_lock(&fsi->users_lock);
	n = fairsem_user_names(fsi, uid);
	if (n > 1)
		xa_store(&fsi->users, __kuid_val(uid), xa_mk_value(n - 1),
			 GFP_KERNEL);
	else
		xa_erase(&fsi->users, __kuid_val(uid));
	mutex_unlock(&fsi->users_lock);
}

/* ---- the files: one per name ---- */

/*
 * open() of a name: a new handle bound to the name's semaphore at once,
 * which then works as any handle, with the device's file operations.  The
 * handle gets its own reference, so it outlives the name.  A closed
 * semaphore is bound all the same: its acquires fail with EIDRM, as the
 * contract says.
 */
static int fairsem_name_open(struct inode *inode, struct file *file)
{
	struct fairsem_sem *sem = inode->i_private;
	struct fairsem_file *ff;
	u64 *holds;

	holds = fairsem_holds_alloc(sem->nkinds);
	if (IS_ERR(holds))
		return PTR_ERR(holds);
	ff = fairsem_file_alloc();
	if (!ff) {
		kfree(holds);
		return -ENOMEM;
	}
	fairsem_sem_get(sem);
	spin_lock(&sem->lock);
	fairsem_attach(sem, &ff->holder, holds);
	ff->holder.sem = sem;	/* private until open() returns */
	spin_unlock(&sem->lock);
	file->private_data = ff;
	/*
	 * The handle's own operations from now on.  Both belong to this
	 * module: the module reference replace_fops() drops for the name's
	 * operations is taken again for the device's.
	 */
	__module_get(THIS_MODULE);
	replace_fops(file, fairsem_handle_fops);
	fairsem_file_nowait(file);
	return stream_open(inode, file);
}

/* Only open: from then on a name's file is a handle like any other. */
static const struct file_operations fairsem_name_fops = {
	.owner = THIS_MODULE,
	.open = fairsem_name_open,
};

/*
 * chmod, chown, utimes as on any file; truncate means nothing here.  A
 * chown of a name moves it to its new owner's count; an unlinked name
 * (fchown of an open handle) is counted no more.  The VFS holds the
 * inode's lock, as unlink does: i_nlink and i_uid stay put meanwhile.
 */
static int fairsem_name_setattr(FAIRSEM_IDMAP_PARAM struct dentry *dentry,
				struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	struct fairsem_fs_info *fsi = inode->i_sb->s_fs_info;
	kuid_t old = inode->i_uid;
	bool moves;
	int ret;

	if (attr->ia_valid & ATTR_SIZE)
		return -EPERM;
	moves = (attr->ia_valid & ATTR_UID) && !uid_eq(attr->ia_uid, old) &&
		inode->i_nlink;
	if (moves) {
		ret = fairsem_user_charge(fsi, attr->ia_uid, true);
		if (ret)
			return ret;
	}
	ret = simple_setattr(FAIRSEM_IDMAP dentry, attr);
	if (moves)
		fairsem_user_uncharge(fsi, ret ? attr->ia_uid : old);
	return ret;
}

static const struct inode_operations fairsem_name_iops = {
	.setattr = fairsem_name_setattr,
};

/*
 * The file type of @sem's names: a regular file, but a jobserver's is a
 * fifo, because ninja takes fifo:PATH only once fstat() says S_IFIFO.
 * Only the type: i_fop stays fairsem_name_fops, so that an open is a
 * handle's, never a pipe's (init_special_inode() is not called).
 */
static umode_t fairsem_name_type(const struct fairsem_sem *sem)
{
	return fairsem_is_jobserver(sem) ? S_IFIFO : S_IFREG;
}

/*
 * The inode of a new name of @sem in @dir (reached through @dir_file),
 * its semaphore not set yet.  Owned as the VFS owns any new file
 * (inode_init_owner()), with @mode minus the caller's umask.
 */
static struct inode *fairsem_name_inode(struct file *dir_file, struct inode *dir,
					const struct fairsem_sem *sem,
					umode_t mode)
{
	struct inode *inode = new_inode(dir->i_sb);

	if (!inode)
		return NULL;
	inode->i_ino = get_next_ino();
	fairsem_init_owner(dir_file, inode, dir, fairsem_name_type(sem) |
			   (mode & ~current_umask() & 0777));
	fairsem_inode_init_ts(inode);
	inode->i_op = &fairsem_name_iops;
	inode->i_fop = &fairsem_name_fops;
	return inode;
}

/* ---- FAIRSEM_IOC_LINK ---- */

/*
 * The semaphore of handle @fd, with a reference for the new name.
 * EBADF unless @fd is a fairsem handle opened for writing (a read-only
 * handle must not be able to publish what it may not take), EBADFD when
 * it is unbound, EIDRM when its semaphore is closed.
 */
static struct fairsem_sem *fairsem_link_target(int fd)
{
	struct fairsem_sem *sem = NULL;
	struct file *file;
	int ret = 0;

	file = fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	if (file->f_op != fairsem_handle_fops || !(file->f_mode & FMODE_WRITE)) {
		ret = -EBADF;
		goto out;
	}
	sem = fairsem_bound(file->private_data);
	if (!sem) {
		ret = -EBADFD;
		goto out;
	}
	spin_lock(&sem->lock);
	if (sem->closed)
		ret = -EIDRM;
	else
		fairsem_sem_get(sem);
	spin_unlock(&sem->lock);
out:
	fput(file);
	return ret ? ERR_PTR(ret) : sem;
}

/*
 * Copy the name in: 1 to NAME_MAX bytes, no '/', not "." or "..", as the
 * VFS would accept for any file.
 */
static int fairsem_link_name(u64 uname, char *name)
{
	long len;

	len = strncpy_from_user(name, u64_to_user_ptr(uname), NAME_MAX + 1);
	if (len < 0)
		return len;
	if (len > NAME_MAX)
		return -ENAMETOOLONG;
	if (!len || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return -EINVAL;
	return 0;
}

/*
 * Under the directory's lock: the negative dentry for @name (found, or
 * made), EEXIST if the name is taken, ENOSPC if the instance is full.
 */
static struct dentry *fairsem_new_dentry(struct dentry *parent,
					 const char *name)
{
	struct fairsem_fs_info *fsi = parent->d_sb->s_fs_info;
	struct dentry *dentry;

	/* The VFS's lookup: a negative dentry still hashed is the one used. */
	dentry = fairsem_lookup_name(parent, name);
	if (IS_ERR(dentry))
		return dentry;
	if (d_really_is_positive(dentry)) {
		dput(dentry);
		return ERR_PTR(-EEXIST);
	}
	if (fsi->names >= fsi->max) {
		dput(dentry);
		return ERR_PTR(-ENOSPC);
	}
	return dentry;
}

/* Give @sem the name @name in @dir_file's directory; consumes @sem's ref. */
static int fairsem_link_to(struct file *dir_file, const char *name,
			   struct fairsem_sem *sem, umode_t mode)
{
	struct dentry *parent = dir_file->f_path.dentry;
	struct inode *dir = d_inode(parent);
	struct fairsem_fs_info *fsi = dir->i_sb->s_fs_info;
	struct dentry *dentry;
	struct inode *inode;
	int ret;

	ret = mnt_want_write_file(dir_file);
	if (ret)
		goto out_put;
	inode_lock_nested(dir, I_MUTEX_PARENT);
	/* What may_create() asks of creat(2): an owner the instance can name, */
	ret = -EOVERFLOW;
	if (!fairsem_fsuidgid_mapped(dir_file))
		goto out_unlock;
	/* ...and write and search permission, the sticky bit aside. */
	ret = fairsem_file_permission(dir_file, dir, MAY_WRITE | MAY_EXEC);
	if (ret)
		goto out_unlock;
	dentry = fairsem_new_dentry(parent, name);
	if (IS_ERR(dentry)) {
		ret = PTR_ERR(dentry);
		goto out_unlock;
	}
	ret = security_inode_create(dir, dentry, fairsem_name_type(sem) | mode);
	if (ret)
		goto out_dput;
	inode = fairsem_name_inode(dir_file, dir, sem, mode);
	if (!inode) {
		ret = -ENOMEM;
		goto out_dput;
	}
	/*
	 * Last: no one owner may hold every name of a shared instance, the
	 * owner of the instance's root directory (root's /run/fairsem, a
	 * user's own instance) aside.
	 */
	ret = fairsem_user_charge(fsi, inode->i_uid,
				  uid_eq(inode->i_uid, dir->i_uid));
	if (ret) {
		iput(inode);	/* without a semaphore yet: evicts nothing else */
		goto out_dput;
	}
	inode->i_private = sem;
	sem = NULL;		/* the inode's now */
	fairsem_pin_name(dentry, inode);
	fsi->names++;
	fairsem_dir_changed(dir);
	fsnotify_create(dir, dentry);
	goto out_unlock;

out_dput:
	dput(dentry);
out_unlock:
	inode_unlock(dir);
	mnt_drop_write_file(dir_file);
out_put:
	if (sem)
		fairsem_sem_put(sem);
	return ret;
}

/*
 * FAIRSEM_IOC_LINK.  Errors answer in the contract's order: the argument
 * (EFAULT, then EINVAL, ENAMETOOLONG), the handle (EBADF, EBADFD, EIDRM),
 * then the directory (EROFS, EOVERFLOW, EACCES, EEXIST, ENOSPC, EDQUOT).
 */
static int fairsem_ioctl_link(struct file *dir_file, void __user *argp)
{
	char name[NAME_MAX + 1];
	struct fairsem_link args;
	struct fairsem_sem *sem;
	int ret;

	if (copy_from_user(&args, argp, sizeof(args)))
		return -EFAULT;
	if (args.reserved[0] || args.reserved[1] || (args.mode & ~0777))
		return -EINVAL;
	ret = fairsem_link_name(args.name, name);
	if (ret)
		return ret;
	sem = fairsem_link_target(args.fd);
	if (IS_ERR(sem))
		return PTR_ERR(sem);
	return fairsem_link_to(dir_file, name, sem, args.mode);
}

static long fairsem_dir_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	if (cmd != FAIRSEM_IOC_LINK)
		return -ENOTTY;
	return fairsem_ioctl_link(file, (void __user *)arg);
}

/* ---- the root directory ---- */

/* open(O_CREAT) of a missing name: a name comes only with a semaphore. */
static int fairsem_dir_create(FAIRSEM_IDMAP_PARAM struct inode *dir,
			      struct dentry *dentry, umode_t mode, bool excl)
{
	return -EPERM;
}

static int fairsem_dir_unlink(struct inode *dir, struct dentry *dentry)
{
	struct fairsem_fs_info *fsi = dir->i_sb->s_fs_info;
	kuid_t owner = d_inode(dentry)->i_uid;
	int ret;

	ret = simple_unlink(dir, dentry);
	if (!ret) {
		fsi->names--;
		fairsem_user_uncharge(fsi, owner);
	}
	return ret;
}

static int fairsem_dir_rename(FAIRSEM_IDMAP_PARAM struct inode *old_dir,
			      struct dentry *old_dentry, struct inode *new_dir,
			      struct dentry *new_dentry, unsigned int flags)
{
	struct fairsem_fs_info *fsi = old_dir->i_sb->s_fs_info;
	bool replaces = d_really_is_positive(new_dentry) &&
			!(flags & RENAME_EXCHANGE);
	kuid_t owner = replaces ? d_inode(new_dentry)->i_uid : INVALID_UID;
	int ret;

	ret = simple_rename(FAIRSEM_IDMAP old_dir, old_dentry, new_dir,
			    new_dentry, flags);
	if (!ret && replaces) {
		fsi->names--;
		fairsem_user_uncharge(fsi, owner);
	}
	return ret;
}

/* No mkdir, mknod, symlink or link: the VFS answers EPERM without them. */
static const struct inode_operations fairsem_dir_iops = {
	.lookup = simple_lookup,
	.create = fairsem_dir_create,
	.unlink = fairsem_dir_unlink,
	.rename = fairsem_dir_rename,
};

static const struct file_operations fairsem_dir_fops = {
	.open = dcache_dir_open,
	.release = dcache_dir_close,
	.llseek = dcache_dir_lseek,
	.read = generic_read_dir,
	.iterate_shared = dcache_readdir,
	.fsync = noop_fsync,
	.unlocked_ioctl = fairsem_dir_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/* ---- the instance ---- */

/* A name's inode goes with its last reference (unlinked, nothing open). */
static int fairsem_drop_inode(struct inode *inode)
{
	return 1;
}

static void fairsem_evict_inode(struct inode *inode)
{
	struct fairsem_sem *sem = S_ISDIR(inode->i_mode) ? NULL : inode->i_private;

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	if (sem)
		fairsem_sem_put(sem);
}

static int fairsem_show_options(struct seq_file *m, struct dentry *root)
{
	struct fairsem_fs_info *fsi = root->d_sb->s_fs_info;

	seq_printf(m, ",mode=%o,uid=%u,gid=%u,max=%u,max_per_user=%u",
		   fsi->mode, from_kuid_munged(seq_user_ns(m), fsi->uid),
		   from_kgid_munged(seq_user_ns(m), fsi->gid), fsi->max,
		   fsi->max_per_user);
	return 0;
}

static const struct super_operations fairsem_super_ops = {
	.statfs = simple_statfs,
	.drop_inode = fairsem_drop_inode,
	.evict_inode = fairsem_evict_inode,
	.show_options = fairsem_show_options,
};

static int fairsem_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct fairsem_fs_info *fsi = fc->fs_private;
	struct inode *root;

	sb->s_maxbytes = MAX_LFS_FILESIZE;
	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_magic = FAIRSEM_FS_MAGIC;
	sb->s_op = &fairsem_super_ops;
	sb->s_time_gran = 1;
	fairsem_set_max(fsi, fsi->max);	/* max_per_user= follows, unless given */
	/* From here on kill_sb frees it, even if this fails. */
	sb->s_fs_info = fsi;
	fc->fs_private = NULL;

	root = new_inode(sb);
	if (!root)
		return -ENOMEM;
	root->i_ino = 1;
	root->i_mode = S_IFDIR | fsi->mode;
	root->i_uid = fsi->uid;
	root->i_gid = fsi->gid;
	fairsem_inode_init_ts(root);
	root->i_op = &fairsem_dir_iops;
	root->i_fop = &fairsem_dir_fops;
	set_nlink(root, 2);
	sb->s_root = d_make_root(root);
	return sb->s_root ? 0 : -ENOMEM;
}

static const struct fs_parameter_spec fairsem_fs_parameters[] = {
	fsparam_u32oct("mode", FAIRSEM_OPT_MODE),
	fsparam_u32("uid", FAIRSEM_OPT_UID),
	fsparam_u32("gid", FAIRSEM_OPT_GID),
	fsparam_u32("max", FAIRSEM_OPT_MAX),
	fsparam_u32("max_per_user", FAIRSEM_OPT_MAX_PER_USER),
	{}
};

/* An unknown option never reaches here: fs_parse() refuses it (EINVAL). */
static int fairsem_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct fairsem_fs_info *fsi = fc->fs_private;
	struct fs_parse_result result;
	int opt;

	opt = fs_parse(fc, fairsem_fs_parameters, param, &result);
	if (opt < 0)
		return opt;
	switch (opt) {
	case FAIRSEM_OPT_MODE:
		if (result.uint_32 & ~07777)
			return invalfc(fc, "mode=%o: not a mode", result.uint_32);
		fsi->mode = result.uint_32;
		break;
	case FAIRSEM_OPT_UID:
		fsi->uid = make_kuid(fc->user_ns, result.uint_32);
		if (!uid_valid(fsi->uid))
			return invalfc(fc, "uid=%u: not mapped", result.uint_32);
		break;
	case FAIRSEM_OPT_GID:
		fsi->gid = make_kgid(fc->user_ns, result.uint_32);
		if (!gid_valid(fsi->gid))
			return invalfc(fc, "gid=%u: not mapped", result.uint_32);
		break;
	case FAIRSEM_OPT_MAX:
		fsi->max = result.uint_32;
		break;
	case FAIRSEM_OPT_MAX_PER_USER:
		fsi->max_per_user = result.uint_32;
		break;
	}
	fsi->given |= BIT(opt);
	return 0;
}

static int fairsem_get_tree(struct fs_context *fc)
{
	/* A new instance for every mount. */
	return get_tree_nodev(fc, fairsem_fill_super);
}

/*
 * mount -o remount: each option named changes the instance as at mount
 * time, the others stay.  mode=, uid= and gid= change the root directory
 * as chmod and chown would; max= below the names held keeps them all and
 * refuses new ones (ENOSPC) until enough are gone.  The VFS has checked
 * CAP_SYS_ADMIN in the instance's user namespace.
 */
static int fairsem_reconfigure(struct fs_context *fc)
{
	struct fairsem_fs_info *opts = fc->fs_private;
	struct super_block *sb = fc->root->d_sb;
	struct fairsem_fs_info *fsi = sb->s_fs_info;
	struct inode *root = d_inode(sb->s_root);

	inode_lock(root);
	if (opts->given & BIT(FAIRSEM_OPT_MODE)) {
		fsi->mode = opts->mode;
		root->i_mode = S_IFDIR | opts->mode;
	}
	if (opts->given & BIT(FAIRSEM_OPT_UID)) {
		fsi->uid = opts->uid;
		root->i_uid = opts->uid;
	}
	if (opts->given & BIT(FAIRSEM_OPT_GID)) {
		fsi->gid = opts->gid;
		root->i_gid = opts->gid;
	}
	if (opts->given & BIT(FAIRSEM_OPT_MAX_PER_USER)) {
		fsi->given |= BIT(FAIRSEM_OPT_MAX_PER_USER);
		fsi->max_per_user = opts->max_per_user;
	}
	if (opts->given & BIT(FAIRSEM_OPT_MAX))
		fairsem_set_max(fsi, opts->max);
	if (opts->given & (BIT(FAIRSEM_OPT_MODE) | BIT(FAIRSEM_OPT_UID) |
			   BIT(FAIRSEM_OPT_GID)))
		fairsem_inode_changed(root);
	inode_unlock(root);
	return 0;
}

static void fairsem_fc_free(struct fs_context *fc)
{
	kfree(fc->fs_private);
}

static const struct fs_context_operations fairsem_context_ops = {
	.free = fairsem_fc_free,
	.parse_param = fairsem_parse_param,
	.get_tree = fairsem_get_tree,
	.reconfigure = fairsem_reconfigure,
};

static int fairsem_init_fs_context(struct fs_context *fc)
{
	struct fairsem_fs_info *fsi;

	fsi = kzalloc_obj(*fsi, GFP_KERNEL_ACCOUNT);
	if (!fsi)
		return -ENOMEM;
	fsi->mode = FAIRSEM_FS_DEFAULT_MODE;
	fsi->uid = current_fsuid();
	fsi->gid = current_fsgid();
	fairsem_set_max(fsi, FAIRSEM_FS_DEFAULT_MAX);
	xa_init(&fsi->users);
	mutex_init(&fsi->users_lock);
	fc->fs_private = fsi;
	fc->ops = &fairsem_context_ops;
	return 0;
}

static void fairsem_kill_sb(struct super_block *sb)
{
	struct fairsem_fs_info *fsi = sb->s_fs_info;

	/* Evicts every name's inode, dropping its semaphore reference. */
	fairsem_kill_names(sb);
	if (fsi)
		xa_destroy(&fsi->users);	/* the counts of the names left */
	kfree(fsi);
}

static struct file_system_type fairsem_fs_type = {
	.owner = THIS_MODULE,	/* no unload while an instance is mounted */
	.name = "fairsem",
	.init_fs_context = fairsem_init_fs_context,
	.parameters = fairsem_fs_parameters,
	.kill_sb = fairsem_kill_sb,
	.fs_flags = FS_USERNS_MOUNT,
};

/**
 * fairsem_fs_register() - register the fairsem filesystem
 * @handle_fops: the file operations of a handle
 *
 * Return: 0 or -errno.
 */
int fairsem_fs_register(const struct file_operations *handle_fops)
{
	fairsem_handle_fops = handle_fops;
	return register_filesystem(&fairsem_fs_type);
}

void fairsem_fs_unregister(void)
{
	unregister_filesystem(&fairsem_fs_type);
}

MODULE_ALIAS_FS("fairsem");
