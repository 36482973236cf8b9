// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * netvm-guest-check: single-node checks of netvm.ko and libnetvm, run in a
 * guest with the driver loaded, before any raw traffic is exchanged.
 *
 *   netvm-guest-check [-d INDEX]
 *
 * Checks device information against sysfs and the driver's validation of
 * every ioctl argument (through the raw ioctls, so the library's own
 * checks do not hide the driver's).  Prints one TAP-like line per check
 * and "N passed, N failed"; exits 1 if any check failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "netvm.h"
#include "netvm_pattern.h"

static unsigned int passed, failed;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %u - ", ok ? "ok" : "not ok", passed + failed + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (ok)
		passed++;
	else
		failed++;
}

/* Read a sysfs attribute of /sys/class/netvm/netvmN; 0 or -errno. */
static int read_attr(unsigned long index, const char *name, char *buf,
		     size_t size)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/netvm/" NETVM_DEV_PREFIX "%lu/%s",
		 index, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* ioctl's result as 0 or -errno. */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static void check_sysfs(unsigned long index, const struct netvm_info *info)
{
	char buf[64];
	int err;

	err = read_attr(index, "node_id", buf, sizeof(buf));
	check(!err && strtoul(buf, NULL, 10) == info->node_id,
	      "sysfs node_id '%s' matches info.node_id %u", err ? "?" : buf,
	      info->node_id);
	err = read_attr(index, "selftest", buf, sizeof(buf));
	check(!err && !strcmp(buf, "passed"), "sysfs selftest is '%s'",
	      err ? "?" : buf);
	err = read_attr(index, "link_state", buf, sizeof(buf));
	check(!err && !strcmp(buf, (info->link & NVM_LINK_UP) ? "up" : "down"),
	      "sysfs link_state '%s' matches info.link %u", err ? "?" : buf,
	      info->link);
	err = read_attr(index, "fw_version", buf, sizeof(buf));
	check(!err && strtoul(buf, NULL, 16) == info->fw_version,
	      "sysfs fw_version '%s' matches info.fw_version %#x",
	      err ? "?" : buf, info->fw_version);
	err = read_attr(index, "raw_rx_dropped", buf, sizeof(buf));
	check(!err, "sysfs raw_rx_dropped readable ('%s')", err ? "?" : buf);
}

static void check_send_validation(int fd, const struct netvm_info *info)
{
	struct netvm_raw_send req;
	static uint8_t payload[16];
	uint8_t *big;

	memset(&req, 0, sizeof(req));
	req.buf = (uintptr_t)payload;
	req.len = 0;
	check(xioctl(fd, NETVM_IOC_RAW_SEND, &req) == -EINVAL,
	      "RAW_SEND len 0 -> EINVAL");

	big = calloc(1, (size_t)info->raw_max_payload + 1);
	req.buf = (uintptr_t)big;
	req.len = info->raw_max_payload + 1;
	check(big && xioctl(fd, NETVM_IOC_RAW_SEND, &req) == -EMSGSIZE,
	      "RAW_SEND len raw_max_payload+1 -> EMSGSIZE");
	free(big);

	req.buf = (uintptr_t)payload;
	req.len = sizeof(payload);
	req.route_len = 9;
	check(xioctl(fd, NETVM_IOC_RAW_SEND, &req) == -EINVAL,
	      "RAW_SEND route_len 9 -> EINVAL");

	req.route_len = 1;
	req.route[0] = 0x01;
	check(xioctl(fd, NETVM_IOC_RAW_SEND, &req) == -EINVAL,
	      "RAW_SEND route byte without MSB -> EINVAL");

	req.route_len = 0;
	req.route[0] = 0;
	req.reserved[1] = 1;
	check(xioctl(fd, NETVM_IOC_RAW_SEND, &req) == -EINVAL,
	      "RAW_SEND reserved field set -> EINVAL");

	req.reserved[1] = 0;
	req.buf = 0;
	check(xioctl(fd, NETVM_IOC_RAW_SEND, &req) == -EINVAL,
	      "RAW_SEND NULL buffer -> EINVAL");

	req.buf = 8;	/* unmapped */
	check(xioctl(fd, NETVM_IOC_RAW_SEND, &req) == -EFAULT,
	      "RAW_SEND unmapped buffer -> EFAULT");

	check(xioctl(fd, NETVM_IOC_RAW_SEND, (void *)8) == -EFAULT,
	      "RAW_SEND unmapped argument -> EFAULT");
}

static void check_recv_validation(struct netvm *nv, int fd,
				  const struct netvm_info *info)
{
	uint8_t buf[64], *big = malloc(info->raw_max_payload);
	struct netvm_raw_recv req;
	struct pollfd pfd;
	size_t len;
	int i, err;

	/* Drop anything left over, then the queue is empty. */
	for (i = 0; big && i < 1000; i++)
		if (netvm_raw_recv(nv, big, info->raw_max_payload, &len, NULL, 0))
			break;
	free(big);
	err = netvm_raw_recv(nv, buf, sizeof(buf), &len, NULL, 0);
	check(err == -EAGAIN, "RAW_RECV timeout 0 on an empty queue -> EAGAIN (%s)",
	      netvm_strerror(err));
	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	check(poll(&pfd, 1, 0) == 0, "poll on an empty queue: not readable");
	err = netvm_raw_recv(nv, buf, sizeof(buf), &len, NULL, 50);
	check(err == -ETIMEDOUT, "RAW_RECV timeout 50 ms -> ETIMEDOUT (%s)",
	      netvm_strerror(err));

	memset(&req, 0, sizeof(req));
	req.buf = (uintptr_t)buf;
	req.len = sizeof(buf);
	req.reserved = 1;
	check(xioctl(fd, NETVM_IOC_RAW_RECV, &req) == -EINVAL,
	      "RAW_RECV reserved field set -> EINVAL");
	req.reserved = 0;
	req.len = 0;
	check(xioctl(fd, NETVM_IOC_RAW_RECV, &req) == -EINVAL,
	      "RAW_RECV zero-length buffer -> EINVAL");
}

int main(int argc, char **argv)
{
	struct netvm_info info, raw_info;
	unsigned long index = 0;
	struct netvm *nv;
	int opt, fd, err;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd' || netvm_parse_uint(optarg, 255, &index)) {
			fprintf(stderr, "usage: netvm-guest-check [-d INDEX]\n");
			return 2;
		}
	}

	err = netvm_open((int)index, &nv);
	check(!err, "open /dev/netvm%lu (%s)", index, netvm_strerror(err));
	if (err)
		goto out;
	fd = netvm_fd(nv);

	err = netvm_info(nv, &info);
	check(!err, "netvm_info (%s)", netvm_strerror(err));
	if (err)
		goto close;
	check(info.abi_version >> 16 == NVM_ABI_VERSION >> 16,
	      "ABI major %u matches the headers' %u", info.abi_version >> 16,
	      NVM_ABI_VERSION >> 16);
	check(info.sram_size >= LANAI_SRAM_MIN && info.sram_size <= LANAI_SRAM_MAX,
	      "SRAM size %u within [%u, %u]", info.sram_size, LANAI_SRAM_MIN,
	      LANAI_SRAM_MAX);
	check(info.raw_max_payload > 0, "raw_max_payload %u > 0",
	      info.raw_max_payload);
	check(info.fw_version != 0, "firmware version %#x is set",
	      info.fw_version);

	check(xioctl(fd, NETVM_IOC_INFO, &raw_info) == 0 &&
	      raw_info.node_id == info.node_id &&
	      !raw_info.reserved[0] && !raw_info.reserved[8],
	      "NETVM_IOC_INFO directly: same node, reserved fields zero");
	check(xioctl(fd, _IO(NETVM_IOC_MAGIC, 0x7f), NULL) == -ENOTTY,
	      "unknown ioctl -> ENOTTY");
	check(xioctl(fd, NETVM_IOC_INFO, (void *)8) == -EFAULT,
	      "NETVM_IOC_INFO to an unmapped address -> EFAULT");

	check_sysfs(index, &info);
	check_send_validation(fd, &info);
	check_recv_validation(nv, fd, &info);

close:
	netvm_close(nv);
out:
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
