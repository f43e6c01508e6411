/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fairsem filesystem needs that changed between the kernels the
 * module builds on (5.10 to 7.x), in one place:
 *
 *   5.12  inode operations take the mount's user namespace first
 *   6.3   ... and then its idmapping (struct mnt_idmap) instead; so do
 *         inode_init_owner() and fsuidgid_has_mapping() (5.12: new)
 *   6.6   ctime behind accessors; 6.7: atime and mtime too
 *   6.19  pinned dentries are made with d_make_persistent() (and unpinned
 *         by simple_unlink() with d_make_discardable()); kill_litter_super()
 *         is gone, kill_anon_super() lets them go
 *
 * and two things the fast path's mapping needs (fairsem_fast.c):
 *
 *   5.11  a page charged to a memory cgroup no longer carries a page type
 *         (PageKmemcg), which vm_insert_page() refuses with EINVAL
 *   6.3   a VMA's vm_flags are read-only, behind accessors; a VMA's pages
 *         are unmapped by zap_page_range_single() (zap_page_range() before)
 *   7.1   ... which is renamed zap_vma_range(), without its details
 */
#ifndef _FAIRSEM_FS_COMPAT_H
#define _FAIRSEM_FS_COMPAT_H

#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/namei.h>
#include <linux/version.h>

/* The one place that asks which kernel this is. */
#define FAIRSEM_KERNEL_SINCE(major, minor) \
	(KERNEL_VERSION(major, minor, 0) <= LINUX_VERSION_CODE)

/*
 * FAIRSEM_IDMAP_PARAM opens the parameter list of an inode operation that
 * takes the mount's idmapping; FAIRSEM_IDMAP passes it on to libfs.
 */
#if FAIRSEM_KERNEL_SINCE(6, 3)
#define FAIRSEM_IDMAP_PARAM	struct mnt_idmap *idmap,
#define FAIRSEM_IDMAP		idmap,
#elif FAIRSEM_KERNEL_SINCE(5, 12)
#define FAIRSEM_IDMAP_PARAM	struct user_namespace *idmap,
#define FAIRSEM_IDMAP		idmap,
#else
#define FAIRSEM_IDMAP_PARAM
#define FAIRSEM_IDMAP
#endif

/* inode_permission() as seen through the mount of @file. */
static inline int fairsem_file_permission(struct file *file,
					  struct inode *inode, int mask)
{
#if FAIRSEM_KERNEL_SINCE(6, 3)
	return inode_permission(file_mnt_idmap(file), inode, mask);
#elif FAIRSEM_KERNEL_SINCE(5, 12)
	return inode_permission(file_mnt_user_ns(file), inode, mask);
#else
	return inode_permission(inode, mask);
#endif
}

/*
 * may_create()'s EOVERFLOW: the caller's fsuid and fsgid, as the mount of
 * @file maps them, must have a mapping in the instance's user namespace,
 * or the new name's owner could not be told apart from the overflow id.
 */
static inline bool fairsem_fsuidgid_mapped(struct file *file)
{
#if FAIRSEM_KERNEL_SINCE(6, 3)
	return fsuidgid_has_mapping(file_inode(file)->i_sb, file_mnt_idmap(file));
#elif FAIRSEM_KERNEL_SINCE(5, 12)
	return fsuidgid_has_mapping(file_inode(file)->i_sb,
				    file_mnt_user_ns(file));
#else
	struct user_namespace *ns = file_inode(file)->i_sb->s_user_ns;

	return kuid_has_mapping(ns, current_fsuid()) &&
	       kgid_has_mapping(ns, current_fsgid());
#endif
}

/*
 * A new inode in @dir, made through the mount of @file: owner and group as
 * the VFS sets them for any new file (the caller's fsuid and fsgid as the
 * mount maps them, the directory's group under a setgid directory).
 */
static inline void fairsem_init_owner(struct file *file, struct inode *inode,
				      struct inode *dir, umode_t mode)
{
#if FAIRSEM_KERNEL_SINCE(6, 3)
	inode_init_owner(file_mnt_idmap(file), inode, dir, mode);
#elif FAIRSEM_KERNEL_SINCE(5, 12)
	inode_init_owner(file_mnt_user_ns(file), inode, dir, mode);
#else
	inode_init_owner(inode, dir, mode);
#endif
}

/* A new inode's times: all now. */
static inline void fairsem_inode_init_ts(struct inode *inode)
{
#if FAIRSEM_KERNEL_SINCE(6, 7)
	simple_inode_init_ts(inode);
#elif FAIRSEM_KERNEL_SINCE(6, 6)
	inode->i_mtime = inode_set_ctime_current(inode);
	inode->i_atime = inode->i_mtime;
#else
	inode->i_mtime = current_time(inode);
	inode->i_atime = inode->i_mtime;
	inode->i_ctime = inode->i_mtime;
#endif
}

/* A directory gained an entry: mtime and ctime now. */
static inline void fairsem_dir_changed(struct inode *dir)
{
#if FAIRSEM_KERNEL_SINCE(6, 7)
	inode_set_mtime_to_ts(dir, inode_set_ctime_current(dir));
#elif FAIRSEM_KERNEL_SINCE(6, 6)
	dir->i_mtime = inode_set_ctime_current(dir);
#else
	dir->i_mtime = current_time(dir);
	dir->i_ctime = dir->i_mtime;
#endif
}

/* An inode's attributes changed (chmod, chown): ctime now. */
static inline void fairsem_inode_changed(struct inode *inode)
{
#if FAIRSEM_KERNEL_SINCE(6, 6)
	inode_set_ctime_current(inode);
#else
	inode->i_ctime = current_time(inode);
#endif
}

/*
 * The dentry of @name in @parent, whose inode the caller has locked, as
 * binderfs finds its names: the dcache's, or a new negative one from
 * simple_lookup().  The caller has checked write and search permission on
 * the directory already, so the check that lookup_one_len() repeats before
 * 6.16 answers the same; lookup_noperm() is its successor without it.
 */
static inline struct dentry *fairsem_lookup_name(struct dentry *parent,
						 const char *name)
{
#if FAIRSEM_KERNEL_SINCE(6, 16)
	return lookup_noperm(&QSTR(name), parent);
#else
	return lookup_one_len(name, parent, strlen(name));
#endif
}

/*
 * Give @dentry (ours, referenced, negative, hashed or not) the inode
 * @inode and pin it in the dcache: a name lives until it is unlinked
 * (simple_unlink() drops the pin) or the instance is unmounted.  Consumes
 * the caller's dentry reference either way.
 */
static inline void fairsem_pin_name(struct dentry *dentry, struct inode *inode)
{
#if FAIRSEM_KERNEL_SINCE(6, 19)
	d_make_persistent(dentry, inode);
	dput(dentry);
#else
	/* The caller's reference becomes the pin, as ramfs's dget() does. */
	if (d_unhashed(dentry))
		d_add(dentry, inode);
	else
		d_instantiate(dentry, inode);
#endif
}

/* Unmount: the pinned names go with the superblock. */
static inline void fairsem_kill_names(struct super_block *sb)
{
#if FAIRSEM_KERNEL_SINCE(6, 19)
	kill_anon_super(sb);
#else
	kill_litter_super(sb);
#endif
}

/*
 * The flags of a page that user space maps.  Up to 5.10, a page charged to
 * a memory cgroup other than the root is typed PageKmemcg, and
 * vm_insert_page() refuses typed pages: in any login session or container
 * the mapping would fail.  There the page is not charged; it is one page a
 * mapping, and the mapping's own allocations still are.
 */
#if FAIRSEM_KERNEL_SINCE(5, 11)
#define FAIRSEM_GFP_MAPPED	(GFP_KERNEL_ACCOUNT | __GFP_ZERO)
#else
#define FAIRSEM_GFP_MAPPED	(GFP_KERNEL | __GFP_ZERO)
#endif

/* Flags for a new mapping, set in its ->mmap(). */
static inline void fairsem_vm_flags_set(struct vm_area_struct *vma,
					vm_flags_t flags)
{
#if FAIRSEM_KERNEL_SINCE(6, 3)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/* Unmap every page of @vma from its process; mmap_lock held. */
static inline void fairsem_zap_vma(struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;

#if FAIRSEM_KERNEL_SINCE(7, 1)
	zap_vma_range(vma, vma->vm_start, len);
#elif FAIRSEM_KERNEL_SINCE(6, 3)
	zap_page_range_single(vma, vma->vm_start, len, NULL);
#else
	zap_page_range(vma, vma->vm_start, len);
#endif
}

#endif /* _FAIRSEM_FS_COMPAT_H */
