/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm.ko: the kernel interfaces that changed between Debian's 6.1 and
 * the 6.12 kernel from bookworm.  Kbuild detects them in the headers
 * (NETVM_HAVE_*), so both build warning-free (tests/lint/build-kernels.sh).
 */
#ifndef NETVM_COMPAT_H
#define NETVM_COMPAT_H

#include <linux/mm.h>

/* 6.3 made vma->vm_flags read-only outside the mm helpers */
static inline void netvm_vm_flags_set(struct vm_area_struct *vma,
				      unsigned long flags)
{
#ifdef NETVM_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/* One page of @mm, referenced (not pinned); 6.5 dropped the vmas array. */
static inline long netvm_gup_remote_one(struct mm_struct *mm,
					unsigned long addr,
					unsigned int gup_flags,
					struct page **page)
{
#ifdef NETVM_HAVE_GUP_VMA_REMOTE
	return get_user_pages_remote(mm, addr, 1, gup_flags, page, NULL);
#else
	return get_user_pages_remote(mm, addr, 1, gup_flags, page, NULL, NULL);
#endif
}

#endif /* NETVM_COMPAT_H */
