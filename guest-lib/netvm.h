/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * libnetvm: the user-space interface to netvm NICs (/dev/netvmN).
 *
 * Conventions
 *   - Every function that can fail returns 0 on success or a negative
 *     errno value (-ENOENT, -ETIMEDOUT, ...); none of them sets errno as
 *     its result, prints or aborts.  netvm_strerror() turns a code into a
 *     message.
 *   - A struct netvm is a handle on one open device.  It may be shared by
 *     threads: the calls keep no state between them apart from the cached
 *     device information, which never changes.
 *
 * Link with -lnetvm (pkg-config --libs netvm).  Symbols are versioned
 * NETVM_0.1.
 */
#ifndef NETVM_LIB_H
#define NETVM_LIB_H

#include <stddef.h>
#include <stdint.h>

#include <netvm/lanai_regs.h>	/* NVM_LINK_UP, NVM_ABI_VERSION */
#include <netvm/netvm_uapi.h>	/* struct netvm_info */

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handle on an open /dev/netvmN. */
struct netvm;

/* Largest source route, in bytes (each byte has its MSB set). */
#define NETVM_ROUTE_MAX		8

/*
 * Open /dev/netvm<index>.  On success *out is a new handle.
 * Errors: -EINVAL (index < 0 or out NULL), -ENOENT (no such device: is
 * netvm.ko loaded?), -ENODEV (the file is not a netvm device), -EACCES,
 * -ENOMEM, or any other open(2) error.
 */
int netvm_open(int index, struct netvm **out);

/* Like netvm_open(), for a device node at an explicit path. */
int netvm_open_path(const char *path, struct netvm **out);

/* Close the handle (NULL is accepted).  Returns 0 or close(2)'s error. */
int netvm_close(struct netvm *nv);

/* The file descriptor behind the handle: poll(2) gives POLLIN while a
 * raw frame is queued.  -EINVAL for NULL. */
int netvm_fd(const struct netvm *nv);

/*
 * Read the device's identity and state: node id, link (NVM_LINK_UP),
 * firmware version, SRAM size, largest raw payload.  The link state is
 * current; the rest does not change while the device is open.
 */
int netvm_info(struct netvm *nv, struct netvm_info *info);

/*
 * Send one raw frame of len bytes (1 .. info.raw_max_payload) along a
 * source route of route_len bytes (0 = the node at the other end of the
 * cable; route may then be NULL).  Blocks until the NIC has put the frame
 * on the wire.
 * Errors: -EINVAL (bad arguments or route), -EMSGSIZE (len too large),
 * -ENOLINK (link down), -ETIMEDOUT (NIC did not send within 5 s), -EIO,
 * -EINTR, -ENODEV (device removed).
 */
int netvm_raw_send(struct netvm *nv, const void *buf, size_t len,
		   const uint8_t *route, unsigned int route_len);

/*
 * Receive one raw frame into buf (cap bytes), waiting at most timeout_ms
 * milliseconds (0: do not wait).  On success *len_out is the frame's
 * length and, if src_node is not NULL, *src_node the sender's node id.
 * Errors: -EAGAIN (timeout_ms == 0 and nothing queued), -ETIMEDOUT,
 * -EMSGSIZE (frame larger than cap: it stays queued and *len_out is set
 * to its length), -EINTR (a signal arrived), -EINVAL, -ENODEV.
 */
int netvm_raw_recv(struct netvm *nv, void *buf, size_t cap, size_t *len_out,
		   unsigned int *src_node, unsigned int timeout_ms);

/*
 * A message for a code returned by this library (0 or negative errno).
 * Never NULL; the string is static.
 */
const char *netvm_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* NETVM_LIB_H */
