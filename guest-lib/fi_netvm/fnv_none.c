// SPDX-License-Identifier: MIT
/* The calls the provider does not offer, and errno to libfabric errors. */
#include <errno.h>

#include "fnv.h"

int fnv_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

int fnv_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	return -FI_ENOSYS;
}

int fnv_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

/* libfabric's error numbers are errno's for these (fi_errno.h) */
int fnv_errno_to_fi(int err)
{
	switch (-err) {
	case EHOSTUNREACH:	return FI_EHOSTUNREACH;
	case ENOTCONN:		return FI_ENOTCONN;
	case EMSGSIZE:		return FI_EMSGSIZE;
	case ERANGE:		return FI_EINVAL;
	case ENOBUFS:		return FI_ENOBUFS;
	case ETIMEDOUT:		return FI_ETIMEDOUT;
	case EFAULT:		return FI_EFAULT;
	case EADDRINUSE:	return FI_EADDRINUSE;
	case ENOSPC:		return FI_ENOSPC;
	default:		return FI_EIO;
	}
}
