// SPDX-License-Identifier: GPL-2.0-only
/* The agent protocol's byte I/O (agent_io.h). */
#include <errno.h>
#include <unistd.h>

#include "agent_io.h"

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);

		if (n == 0)
			return -1;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int send_frame(int sock, char type, const void *data, uint32_t len)
{
	unsigned char hdr[5];

	hdr[0] = (unsigned char)type;
	hdr[1] = (unsigned char)(len >> 24);
	hdr[2] = (unsigned char)(len >> 16);
	hdr[3] = (unsigned char)(len >> 8);
	hdr[4] = (unsigned char)len;
	if (write_all(sock, hdr, sizeof(hdr)) < 0)
		return -1;
	return len ? write_all(sock, data, len) : 0;
}
