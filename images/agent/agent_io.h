/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent protocol's byte I/O, shared by netvm-agent (the guest side of
 * ./netvm run) and netvm-rsh (a client of other nodes' agents): whole
 * reads and writes, and a frame (type byte, 32-bit big-endian length,
 * payload).  tools/netvm_cli/agent.py is the host side.
 */
#ifndef NETVM_AGENT_IO_H
#define NETVM_AGENT_IO_H

#include <stddef.h>
#include <stdint.h>

/* 0, or -1 on an error (EINTR is retried) */
int write_all(int fd, const void *buf, size_t len);
/* 0, or -1 on an error or an early end of file */
int read_all(int fd, void *buf, size_t len);
/* one frame of @type with @len bytes of @data; 0 or -1 */
int send_frame(int sock, char type, const void *data, uint32_t len);

#endif /* NETVM_AGENT_IO_H */
