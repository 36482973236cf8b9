// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libnetvm: thin, checked wrappers around the /dev/netvmN ioctls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "netvm_priv.h"

NETVM_PUBLIC int netvm_open_path(const char *path, struct netvm **out)
{
	struct netvm *nv;
	int fd, err;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;

	nv = calloc(1, sizeof(*nv));
	if (!nv) {
		close(fd);
		return -ENOMEM;
	}
	nv->fd = fd;
	nv->efd = -1;
	nvl_notf_init(nv);
	snprintf(nv->path, sizeof(nv->path), "%s", path);
	if (ioctl(fd, NETVM_IOC_INFO, &nv->info) < 0) {
		err = errno;
		close(fd);
		nvl_notf_fini(nv);
		free(nv);
		/* A file that does not know our ioctls is not a netvm device. */
		return (err == ENOTTY || err == EINVAL) ? -ENODEV : -err;
	}
	*out = nv;
	return 0;
}

NETVM_PUBLIC int netvm_open(int index, struct netvm **out)
{
	char path[64];

	if (out)
		*out = NULL;
	if (index < 0 || !out)
		return -EINVAL;
	snprintf(path, sizeof(path), "/dev/" NETVM_DEV_PREFIX "%d", index);
	return netvm_open_path(path, out);
}

NETVM_PUBLIC int netvm_close(struct netvm *nv)
{
	int ret = 0;

	if (!nv)
		return 0;
	if (nvl_notf_stop(nv) == -EDEADLK)
		return -EDEADLK;
	nvl_ep_close(nv);
	if (close(nv->fd) < 0 && errno != EINTR)
		ret = -errno;
	nvl_notf_fini(nv);
	free(nv);
	return ret;
}

NETVM_PUBLIC int netvm_fd(const struct netvm *nv)
{
	return nv ? nv->fd : -EINVAL;
}

NETVM_PUBLIC int netvm_info(struct netvm *nv, struct netvm_info *info)
{
	if (!nv || !info)
		return -EINVAL;
	if (ioctl(nv->fd, NETVM_IOC_INFO, info) < 0)
		return -errno;
	return 0;
}

NETVM_PUBLIC int netvm_raw_send(struct netvm *nv, const void *buf, size_t len,
				const uint8_t *route, unsigned int route_len)
{
	struct netvm_raw_send req;
	unsigned int i;

	if (!nv || !buf || !len || route_len > NETVM_ROUTE_MAX ||
	    (route_len && !route))
		return -EINVAL;
	if (len > nv->info.raw_max_payload || len > UINT32_MAX)
		return -EMSGSIZE;
	for (i = 0; i < route_len; i++)
		if (!(route[i] & 0x80))
			return -EINVAL;

	memset(&req, 0, sizeof(req));
	req.buf = (uint64_t)(uintptr_t)buf;
	req.len = (uint32_t)len;
	req.route_len = (uint8_t)route_len;
	if (route_len)
		memcpy(req.route, route, route_len);
	if (ioctl(nv->fd, NETVM_IOC_RAW_SEND, &req) < 0)
		return -errno;
	return 0;
}

NETVM_PUBLIC int netvm_raw_recv(struct netvm *nv, void *buf, size_t cap,
				size_t *len_out, unsigned int *src_node,
				unsigned int timeout_ms)
{
	struct netvm_raw_recv req;
	int err;

	if (len_out)
		*len_out = 0;
	if (!nv || !buf || !cap || !len_out)
		return -EINVAL;

	memset(&req, 0, sizeof(req));
	req.buf = (uint64_t)(uintptr_t)buf;
	req.len = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
	req.timeout_ms = timeout_ms;
	if (ioctl(nv->fd, NETVM_IOC_RAW_RECV, &req) < 0) {
		err = errno;
		if (err == EMSGSIZE)
			*len_out = req.len;
		return -err;
	}
	*len_out = req.len;
	if (src_node)
		*src_node = req.src_node;
	return 0;
}

NETVM_PUBLIC const char *netvm_strerror(int err)
{
	const char *s;

	switch (err) {
	case 0:
		return "success";
	case -ENOENT:
		return "no such netvm device (is netvm.ko loaded?), or no such export";
	case -ENODEV:
		return "not a netvm device, or the device was removed";
	case -EAGAIN:
		return "no frame waiting";
	case -ETIMEDOUT:
		return "timed out";
	case -ENOLINK:
		return "link down";
	case -EMSGSIZE:
		return "frame too large (for the NIC or the buffer)";
	case -EINVAL:
		return "invalid argument";
	case -EBUSY:
		return "NIC busy: transmit ring full";
	default:
		break;
	}
	if (err < 0 && err > -4096) {
		s = strerrordesc_np(-err);
		if (s)
			return s;
	}
	return "unknown error";
}
