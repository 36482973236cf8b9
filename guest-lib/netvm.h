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
 *   - Endpoint calls (netvm_register() and everything after it in this
 *     file) are NOT thread-safe per handle: use one handle (one endpoint)
 *     per thread, or serialise the calls on a handle yourself.  Distinct
 *     handles are independent.  netvm_info(), the raw-frame calls and the
 *     notification calls (netvm_notf_*, netvm_notfq_*) may be made from
 *     any thread, handlers included.
 *
 * Link with -lnetvm (pkg-config --libs netvm).  Symbols are versioned
 * NETVM_0.1 (device and raw frames), NETVM_0.2 (NetVM endpoints) and
 * NETVM_0.3 (spin, handlers, import_wait; netvm_sync.h).
 * docs/api.md has the whole reference.
 */
#ifndef NETVM_LIB_H
#define NETVM_LIB_H

#include <stddef.h>
#include <stdint.h>

#include <netvm/lanai_regs.h>	/* NVM_LINK_UP, NVM_ABI_VERSION */
#include <netvm/netvm_uapi.h>	/* struct netvm_info */
#include <netvm/unet_abi.h>	/* NVM_UNET_MSG_MAX */

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

/* ==== NetVM: endpoints, exports, imports, data, atomics, notifications ==== */

#define NETVM_PORT_ANY		(-1)
#define NETVM_NAME_MAX		32	/* names, NUL included */
#define NETVM_NOTF_MAX		1023	/* counting notifications 1..1023 */

/*
 * Register an endpoint (NetVM port) on this handle.  port must be
 * NETVM_PORT_ANY (the driver picks a free one; anything else gives
 * -EOPNOTSUPP); notf_len is the wanted notification queue size, 0 for the
 * driver's (256), at most 256.  Maps the endpoint's command queue,
 * doorbell and host block, and arms every notification (each wakes
 * netvm_notf_wait()/netvm_notfq_wait()).  Returns the port (>= 1).
 * Errors: -EBUSY (already registered), -EINVAL, -ENODEV (NetVM off),
 * -ENOSPC/-EBUSY (no free port), open/mmap errors.
 */
int netvm_register(struct netvm *nv, int port, unsigned int notf_len);

/* Close the endpoint: aborts its commands, drops its exports and forgets
 * its imports.  0, or -ENXIO if none was registered. */
int netvm_unregister(struct netvm *nv);

/* The endpoint's file descriptor (poll: POLLIN when a notification is
 * queued), or -ENXIO. */
int netvm_ep_fd(const struct netvm *nv);

/*
 * Export [addr, addr + size) of this process under name (unique per
 * handle, 1..31 characters).  Nothing is pinned.  flags: NETVM_EXPORT_RO
 * (remote writes and atomics fail with -EROFS at the writer).  On success
 * returns a handle (>= 0) and, if key is not NULL, the random 64-bit key.
 * Local buffers given to netvm_write*() (sources) and netvm_read*()
 * (targets) must lie in one of the caller's exports -- a NetVM rule: the
 * NIC checks the source page's key too.  Only writes whose fragments are
 * all inline (<= 96 bytes each) are exempt.
 * Errors: -ENXIO (no endpoint), -EINVAL, -ENAMETOOLONG, -EEXIST (name
 * taken, or overlaps an export), -ENOSPC (64 exports), -ENOMEM.
 */
int netvm_export(struct netvm *nv, const char *name, void *addr, size_t size,
		 unsigned int flags, uint64_t *key);
/* Remove an export: -EBADF for a bad handle. */
int netvm_unexport(struct netvm *nv, int handle);
/*
 * A fresh random key, and the name new_name, for export h: everything
 * granted under its old key (and imports by its old name) fails from now
 * on (it returns once no access under the old key is still moving bytes),
 * while the NIC keeps its translations of the pages -- cheaper than
 * netvm_unexport() and netvm_export() of the same buffer again.  The new
 * key in *key if not NULL.  Errors: -EBADF (bad handle), -EEXIST (the name
 * is another export's), -EINVAL, -ENAMETOOLONG, -ENXIO.
 */
int netvm_rekey(struct netvm *nv, int h, const char *new_name, uint64_t *key);
/* The handle of this handle's export called name, or -ENOENT. */
int netvm_export_lookup(struct netvm *nv, const char *name, uint64_t *key);

/*
 * Import the export called name of (node, port): the driver asks node's
 * kernel over the NIC (at most 5 s).  node may be this node.  Returns a
 * segment handle (>= 0).  Importing the same (node, port, name) twice
 * gives a second handle.  Errors: -ENOENT (no such name or port there),
 * -ETIMEDOUT (node did not answer), -EHOSTUNREACH (no such node on the
 * cable / no route), -ENOLINK, -EINTR, -ENOSPC (64 imports), -EINVAL,
 * -ENAMETOOLONG.
 */
int netvm_import(struct netvm *nv, unsigned int node, unsigned int port,
		 const char *name);
/* netvm_import, retrying every 20 ms while the answer is -ENOENT or
 * -ECONNREFUSED (the peer has not registered or exported yet), for up to
 * timeout_ms; then -ETIMEDOUT. */
int netvm_import_wait(struct netvm *nv, unsigned int node, unsigned int port,
		      const char *name, int timeout_ms);
/* Forget a segment (no message is sent).  -EBADF for a bad handle. */
int netvm_unimport(struct netvm *nv, int seg);
/* An existing segment of (node, port, name), or -ENOENT. */
int netvm_import_lookup(struct netvm *nv, unsigned int node, unsigned int port,
			const char *name);

struct netvm_segment {
	uint32_t node;
	uint32_t port;
	uint64_t addr;		/* the exporter's address */
	uint64_t len;		/* bytes: offsets 0 .. len - 1 */
	uint64_t key;
	uint32_t flags;		/* NETVM_EXPORT_RO */
	uint32_t pt_rows;
};
/* What a segment refers to.  -EBADF for a bad handle. */
int netvm_import_info(struct netvm *nv, int seg, struct netvm_segment *out);
/* What this handle's export h looks like to an importer (this node and
 * port, its address, length, key, flags and this node's pt_rows): what a
 * process may send a peer itself, for netvm_import_segment().  -EBADF
 * for a bad handle, -ENXIO without an endpoint. */
int netvm_export_info(struct netvm *nv, int h, struct netvm_segment *out);
/*
 * An import made from an export's description (netvm_export_info) that
 * the exporter sent over a channel of its own: no message is sent and
 * nothing is asked of the exporter's node, where netvm_import() takes a
 * round trip to its kernel.  Trust nothing more than for netvm_import():
 * the exporter's NIC checks each page's key, so a wrong description
 * makes the transfers fail (-EKEYREJECTED, -EFAULT).  name is what
 * netvm_import_lookup() finds.  Errors: -EINVAL (node or port above
 * 0xffff, len 0 or above NETVM_EXPORT_MAX, addr + len wraps, pt_rows 0,
 * unknown flags, no name), -ENAMETOOLONG, -ENOSPC (64 imports).
 */
int netvm_import_segment(struct netvm *nv, const struct netvm_segment *s,
			 const char *name);

/*
 * Data transfer, any size and alignment.  The library cuts the transfer
 * at page boundaries on both sides (one command per piece, pieces of at
 * most 96 bytes of a write travel inline) and queues the commands.
 *   netvm_write:   local [addr, +size) -> segment [off, +size); returns
 *                  once queued (inline pieces are copied; other source
 *                  bytes are read by the NIC later: do not change them
 *                  before netvm_flushW()).
 *   netvm_writeF:  the same, returning when the write has completed
 *                  (source reusable, errors reported).
 *   netvm_writeN / netvm_writeFN: plus notification notf (1..1023
 *                  counting, >= 1024 one-shot) at the receiver, carried
 *                  by the last piece only, so it arrives after all data.
 *   netvm_read:    segment [off, +size) -> local [addr, +size); the data
 *                  is there after netvm_flushR().
 *   netvm_readF:   the same, returning with the data in place.
 * size 0 does nothing.  Checks before anything is sent: -EBADF (bad
 * segment or no endpoint: -ENXIO), -ERANGE (off + size past the segment),
 * -EROFS (write to a read-only segment), -ENOKEY (local buffer not in an
 * export), -EINVAL (NULL addr, notf 0).  Errors of the transfer itself
 * (returned by the F variants and the flushes): -EKEYREJECTED (bad key),
 * -ECONNREFUSED (no such port), -EROFS, -EHOSTUNREACH (peer unreachable),
 * -ECONNRESET (peer restarted), -EFAULT (the remote range is not
 * exported), -ECANCELED, -EIO, -ETIMEDOUT (no completion within 30 s).
 */
int netvm_write(struct netvm *nv, int seg, uint64_t off, const void *addr,
		size_t size);
int netvm_writeF(struct netvm *nv, int seg, uint64_t off, const void *addr,
		 size_t size);
int netvm_writeN(struct netvm *nv, int seg, uint64_t off, const void *addr,
		 size_t size, uint32_t notf);
int netvm_writeFN(struct netvm *nv, int seg, uint64_t off, const void *addr,
		  size_t size, uint32_t notf);
int netvm_read(struct netvm *nv, int seg, uint64_t off, void *addr,
	       size_t size);
int netvm_readF(struct netvm *nv, int seg, uint64_t off, void *addr,
		size_t size);

/*
 * Wait until every command issued so far on the endpoint has completed
 * (the NI has one completion counter per endpoint, so the three are the
 * same wait).  Returns 0, or the first transfer error reported since the
 * last flush (see above), or -ETIMEDOUT after 30 s.
 */
int netvm_flushR(struct netvm *nv);
int netvm_flushW(struct netvm *nv);
int netvm_flushRW(struct netvm *nv);

/*
 * Atomics on the 32-bit word at segment offset off (4-aligned, else
 * -EINVAL; past the segment -ERANGE), synchronous: each returns 0 with
 * the old value in *old (testandset: 1 if the word was set), or an error
 * as for netvm_writeF().
 */
int netvm_testandset(struct netvm *nv, int seg, uint64_t off, uint32_t *old);
int netvm_incr(struct netvm *nv, int seg, uint64_t off, uint32_t *old);
int netvm_decr(struct netvm *nv, int seg, uint64_t off, uint32_t *old);
int netvm_swap(struct netvm *nv, int seg, uint64_t off, uint32_t val,
	       uint32_t *old);
int netvm_cswap(struct netvm *nv, int seg, uint64_t off, uint32_t expect,
		uint32_t val, uint32_t *old);
/*
 * NetVM's wait-queue primitives on the 5-word block (H, T, C, P, S) at
 * off (20 bytes within the segment, not crossing a page); r[0..2] are
 * the NI's results (netvm_fw.h, enum nvm_atomic_op).
 */
#define NETVM_WQ_EMPTY		0xffffffffu	/* no id (NVM_WQ_EMPTY) */
int netvm_enqueue(struct netvm *nv, int seg, uint64_t off, uint32_t id,
		  uint32_t r[3]);
int netvm_dequeue(struct netvm *nv, int seg, uint64_t off, uint32_t r[3]);
int netvm_newhead(struct netvm *nv, int seg, uint64_t off, uint32_t head,
		  uint32_t r[3]);
int netvm_semP(struct netvm *nv, int seg, uint64_t off, uint32_t id,
	       uint32_t r[3]);
int netvm_semV(struct netvm *nv, int seg, uint64_t off, uint32_t r[3]);

/* One entry of the notification queue. */
struct netvm_notf {
	uint32_t notf;		/* its number */
	uint16_t src_node;
	uint16_t src_port;
};

/*
 * Counting notifications 1..1023 (else -EINVAL).
 *   netvm_notf_test: events signalled and not yet acknowledged (>= 0).
 *   netvm_notf_ack:  acknowledge one; returns how many remain, or -EAGAIN
 *                    if none was pending.
 *   netvm_notf_wait: wait (sleeping in poll(2)) until one is pending;
 *                    returns the pending count (it does not acknowledge).
 *                    timeout_ms < 0 waits for ever; -ETIMEDOUT, -EINTR.
 */
int netvm_notf_test(struct netvm *nv, uint32_t notf);
int netvm_notf_ack(struct netvm *nv, uint32_t notf);
int netvm_notf_wait(struct netvm *nv, uint32_t notf, int timeout_ms);

/*
 *   netvm_notf_spin: like netvm_notf_wait, busy-polling the counters
 *                    instead of sleeping (lowest latency, one CPU busy);
 *                    -ETIMEDOUT.
 * netvm_notf_ack, _wait and _spin give -EBUSY for an armed number: its
 * events belong to its handler.
 */
int netvm_notf_spin(struct netvm *nv, uint32_t notf, int timeout_ms);

/*
 * Handlers.  netvm_notf_arm binds fn to counting notification notf
 * (1..1023): fn(nv, notf, arg) is then called exactly once per event,
 * events already pending included, and each event is acknowledged after
 * its call returns.  Calls come from one thread the library starts on the
 * first arm (all signals blocked in it); handlers of one handle never run
 * concurrently with each other.  -EBUSY if notf is armed already.
 * netvm_notf_disarm unbinds it; once it returns the handler is not running
 * and is not called again (from inside a handler it only unbinds);
 * -ENOENT if not armed.  In a handler: netvm_notf_* on the same handle are
 * allowed; data calls and atomics only if no other thread uses the handle
 * meanwhile (see docs/api.md, Thread safety); netvm_unregister and
 * netvm_close give -EDEADLK.  Armed numbers do not appear in the
 * notification queue.
 */
typedef void (*netvm_notf_handler)(struct netvm *nv, uint32_t notf,
				   void *arg);
int netvm_notf_arm(struct netvm *nv, uint32_t notf, netvm_notf_handler fn,
		   void *arg);
int netvm_notf_disarm(struct netvm *nv, uint32_t notf);

/*
 * The notification queue: one entry per one-shot notification, and one
 * per counting notification that went from none to one pending.
 *   netvm_notfq_remove: take the oldest entry; -EAGAIN if none.
 *   netvm_notfq_wait:   the same, waiting up to timeout_ms (< 0: for ever);
 *                       -ETIMEDOUT, -EINTR.
 */
int netvm_notfq_remove(struct netvm *nv, struct netvm_notf *out);
int netvm_notfq_wait(struct netvm *nv, int timeout_ms, struct netvm_notf *out);

/* ---- U-Net message endpoints (NETVM_0.3; docs/unet.md) ----------------
 *
 * A U-Net endpoint is a second descriptor on the device with its own port,
 * a pinned communication segment mapped into the process, a send queue and
 * a free queue in the NIC and a receive queue in host memory.  Messages of
 * 1..4096 bytes travel on channels the kernel sets up; up to 96 bytes go
 * inside the descriptors, larger ones through the segment.  Not
 * thread-safe per endpoint (one thread per endpoint, or your own lock).
 *
 * The library divides the segment: [0, NETVM_UNET_TX_AREA) stages what
 * netvm_unet_send() copies; the last rx_bufs * buf_size bytes are the
 * receive buffers it keeps on the free queue; the bytes in between are
 * the application's, for netvm_unet_send_seg().
 */
struct netvm_unet;

#define NETVM_UNET_MSG_MAX	NVM_UNET_MSG_MAX
#define NETVM_UNET_TX_SLOTS	16
#define NETVM_UNET_TX_AREA	(NETVM_UNET_TX_SLOTS * NETVM_UNET_MSG_MAX)

/* What the NI counted for this endpoint (struct nvm_unet_status). */
struct netvm_unet_stats {
	uint32_t sent;		/* send descriptors taken */
	uint32_t send_errors;	/* ... refused */
	uint32_t received;	/* messages delivered */
	uint32_t rx_ring_full;	/* not direct: receive queue full */
	uint32_t rx_no_buf;	/* not direct: no free buffer */
	uint32_t div_order;	/* not direct: earlier ones were diverted */
	uint32_t diverted;	/* to the driver's pageable buffer (FUGU) */
	uint32_t dropped;	/* no divert ring: lost */
};

/*
 * Open an endpoint on nv's device: seg_size bytes of segment (page
 * multiple, at most 1 MiB, room for the tx area and the buffers),
 * buf_size 1024/2048/4096, rx_bufs receive buffers (1..511), a receive
 * queue of 256 descriptors.  Errors: -EINVAL, -EBUSY (no free port),
 * -ENODEV (NetVM off), -ENOMEM.
 */
int netvm_unet_open(struct netvm *nv, size_t seg_size, unsigned int buf_size,
		    unsigned int rx_bufs, struct netvm_unet **out);
/*
 * netvm_unet_open with flags.  NETVM_UNET_OPEN_PAGEABLE: the segment is
 * the process's own anonymous memory, not pinned: it may be swapped out
 * (a child made by fork does not get it: MADV_DONTFORK).  A message
 * whose receive buffer is not resident is diverted to the driver and
 * arrives in order all the same (FUGU); a send whose data is not resident
 * waits while the kernel brings it in.  Needs a NIC port: -EBUSY when none
 * is free (a pageable endpoint is never kernel-emulated).  seg_size must
 * be a page multiple.
 */
#define NETVM_UNET_OPEN_PAGEABLE	0x1
int netvm_unet_openx(struct netvm *nv, size_t seg_size, unsigned int buf_size,
		     unsigned int rx_bufs, unsigned int flags,
		     struct netvm_unet **out);
/*
 * FUGU's "process not running": on = 1 makes the calling thread the
 * endpoint's watched thread; while it is preempted or stopped (SIGSTOP,
 * a debugger) the NI diverts its messages to the driver's pageable
 * buffer instead of its receive queue; they arrive in order all the
 * same.  Sleeping in a blocking receive or poll counts as running.
 * on = 0 turns it off.  Errors: -EOPNOTSUPP (kernel-emulated endpoint),
 * -ENOSPC (too many watched threads).
 */
int netvm_unet_sched(struct netvm_unet *u, int on);

/* Direct and diverted deliveries of an endpoint, by cause (FUGU). */
struct netvm_unet_fugu_stats {
	uint32_t direct;	/* into the receive queue */
	uint32_t diverted;	/* to the driver's buffer, all causes: */
	uint32_t ring_full;	/*   the receive queue was full */
	uint32_t no_buf;	/*   no free buffer */
	uint32_t not_resident;	/*   a buffer page was not resident */
	uint32_t not_running;	/*   the watched thread was not running */
	uint32_t order;		/*   earlier ones were still buffered */
	uint32_t dropped;	/* lost: the NIC had no divert ring */
	uint32_t tx_misses;	/* sends that waited for a segment page */
	uint32_t buffered_lost;	/* lost past the driver's hard bound: only a
				 * sender ignoring holds gets there (seen) */
};
int netvm_unet_fugu_stats(struct netvm_unet *u,
			  struct netvm_unet_fugu_stats *st);

/*
 * Overflow control (NETVM_0.6): when an endpoint's buffered messages pass
 * the high-water mark (module parameter unet_divert_kib), its NI tells the
 * senders of its channels to hold; they wait in netvm_unet_send (or get
 * -EAGAIN with NETVM_UNET_DONTWAIT) until it is back to direct delivery.
 */
struct netvm_unet_flow_stats {
	uint32_t hold_on;	/* receiver: holds asserted (high-water) */
	uint32_t hold_off;	/*   released (back to direct delivery) */
	uint32_t tx_held;	/* sender: times our sends waited for a hold */
	uint32_t tx_held_now;	/*   1 while the next send waits for one */
	uint32_t hold_expired;	/*   holds that ran out unrefreshed */
	uint32_t peer_dropped;	/*   messages a receiver without a divert
				 *   ring dropped (flush: -ENOBUFS) */
	uint32_t buffered_lost;	/* as in netvm_unet_fugu_stats */
	uint32_t divert_mode;	/* 1 while our messages are diverted */
};
int netvm_unet_flow_stats(struct netvm_unet *u,
			  struct netvm_unet_flow_stats *st);
int netvm_unet_close(struct netvm_unet *u);		/* NULL accepted */
int netvm_unet_fd(const struct netvm_unet *u);	/* POLLIN: message queued */
int netvm_unet_port(const struct netvm_unet *u);	/* >= 16: emulated */
/*
 * 1 if the endpoint is kernel-emulated: the NIC had no port left (or the
 * environment has NETVM_UNET_EMULATE set, for tests).  Same interface;
 * each send costs a system call (the driver plays the NI).
 */
int netvm_unet_emulated(const struct netvm_unet *u);
/*
 * The caller found nothing, again, and only waits: let the host give this
 * vCPU's CPU to another that wants it (one uncached read of the endpoint's
 * doorbell page, LANAI_DB_YIELD).  Cheap where the vCPU has a CPU to
 * itself; call it now and then from a polling loop, not on every pass.
 * A kernel-emulated endpoint has no NIC behind it: nothing is done.
 */
void netvm_unet_yield(struct netvm_unet *u);
/* The same through a NetVM endpoint's doorbell page. */
void netvm_yield(struct netvm *nv);
/* The segment and its size; the application's part starts at
 * NETVM_UNET_TX_AREA and ends at *app_end. */
void *netvm_unet_segment(struct netvm_unet *u, size_t *size, size_t *app_end);

/*
 * Ask the kernel for a channel to (node, port) carrying tag; returns the
 * channel id (>= 0).  Both ends set up a channel with the same tag.
 * Errors: -EINVAL, -EADDRINUSE (this endpoint already has a channel to
 * that node and port with that tag; other endpoints may have one),
 * -ENOSPC (16 channels).  netvm_unet_unchannel: -ENOENT.
 */
int netvm_unet_channel(struct netvm_unet *u, unsigned int node,
		       unsigned int port, uint32_t tag);
int netvm_unet_unchannel(struct netvm_unet *u, int channel);

/*
 * Send len (1..4096) bytes on a channel: inline up to 96 bytes, else
 * copied into the tx area.  Returns once queued (waiting for a free
 * descriptor); the NI's verdict comes with netvm_unet_flush().
 * netvm_unet_send_seg sends len bytes at segment offset off as they are
 * (U-Net's own call: the NI checks the range, not the library).
 */
int netvm_unet_send(struct netvm_unet *u, int channel, const void *buf,
		    size_t len);
int netvm_unet_send_seg(struct netvm_unet *u, int channel, uint32_t off,
			uint32_t len);
/*
 * Wait until the NI took every queued descriptor; return the first error
 * since the last flush: -ENOTCONN (no such channel), -ERANGE (outside the
 * segment), -EMSGSIZE (length), -EIO (DMA), -ETIMEDOUT; -ENOBUFS: a
 * receiver without a divert ring dropped messages of ours (U-Net's own
 * drop, the only one left).  Sends held by a receiver (overflow control)
 * are waited for, however long the hold lasts.
 */
int netvm_unet_flush(struct netvm_unet *u, int timeout_ms);

/*
 * Take the next message: copy it to buf, give its buffers back to the free
 * queue.  Messages the NI could not queue (queue full, no free buffer) were
 * diverted to the driver, which keeps them in pageable memory; they come
 * back here in arrival order with the direct ones (a system call each).  timeout_ms 0 polls (-EAGAIN), < 0 waits for ever, else
 * -ETIMEDOUT; waiting sleeps in poll(2) on netvm_unet_fd(), woken by one
 * interrupt the NI raises only while someone waits.  -EMSGSIZE when cap
 * is too small (*len = the size; the message stays queued), -EINTR.
 */
int netvm_unet_recv(struct netvm_unet *u, void *buf, size_t cap, size_t *len,
		    unsigned int *channel, int timeout_ms);
/*
 * netvm_unet_recv, and who sent it: the node (as the link vouched for it)
 * and the port (stamped by its NI) (NETVM_0.7).  With an any-source
 * channel (netvm_unet_channel(u, NETVM_UNET_ANY, NETVM_UNET_ANY, tag):
 * every message to this endpoint with that tag, whoever sent it; it only
 * receives) a server learns its peers' addresses this way.
 */
#define NETVM_UNET_ANY	NVM_UNET_ANY
/*
 * For callers that poll(2) netvm_unet_fd() beside other descriptors: arm
 * the one wakeup for the next message, then look.  1: a message is there
 * already (do not sleep); 0: POLLIN comes when one is (NETVM_0.7).
 */
int netvm_unet_arm(struct netvm_unet *u);
int netvm_unet_recvfrom(struct netvm_unet *u, void *buf, size_t cap,
			size_t *len, unsigned int *channel, unsigned int *node,
			unsigned int *port, int timeout_ms);
int netvm_unet_stats(struct netvm_unet *u, struct netvm_unet_stats *st);

/*
 * Upcalls: signal signo (e.g. SIGRTMIN) to this process when the receive
 * queue becomes non-empty (si_band has POLLIN) or holds almost_full
 * messages (POLLPRI; 0 = never); si_fd is netvm_unet_fd().  Install a
 * SA_SIGINFO handler first; it should drain the queue with
 * netvm_unet_recv(..., 0), which is async-signal-safe with timeout 0.
 * An upcall is raised on the edge only, so one upcall covers every
 * message queued until the queue is empty again.
 * Errors: -EINVAL, or fcntl(2)'s.
 */
int netvm_unet_upcall_setup(struct netvm_unet *u, int signo,
			    unsigned int almost_full);
/*
 * Turn upcalls off or on again with one store to the NIC (no system
 * call), e.g. around a critical section.  Turning them on returns 1 if
 * messages are queued (their upcall may have been skipped: drain them),
 * else 0.
 */
int netvm_unet_upcalls(struct netvm_unet *u, int on);

/* ---- DSM extensions on U-Net (NETVM_0.4; docs/dsm.md) ------------------
 *
 * For request/reply traffic such as TreadMarks': the sender chooses per
 * message whether it interrupts the receiver; a message can gather up to
 * 4 pieces of the segment; a requester can name, per reply number, the
 * buffer of its segment the reply goes to, and the NI writes the reply
 * straight there (zero copy, no free buffer) when it fits.  The same on
 * kernel-emulated endpoints, where the driver plays the NI (a hit is then
 * one copy by the driver, not zero).
 */
#define NETVM_UNET_NOINTR	0x1	/* no wakeup or upcall at the receiver */
#define NETVM_UNET_REPLY	0x2	/* a reply carrying a reply number */
#define NETVM_UNET_HIT		0x4	/* recvmsg: in the reply buffer */
/* sendx, sendv: -EAGAIN instead of waiting for a descriptor (a receiver's
 * hold, or a full send queue); NETVM_0.6 */
#define NETVM_UNET_DONTWAIT	0x8
#define NETVM_UNET_GATHER_MAX	4
#define NETVM_UNET_REPLY_SLOTS	256

struct netvm_unet_piece {
	uint32_t off;		/* segment offset */
	uint32_t len;
};

/*
 * netvm_unet_sendx: netvm_unet_send with flags (NOINTR, REPLY) and the
 * reply number (with REPLY: 0..255).  netvm_unet_sendv: the n (1..4)
 * pieces of the segment as one message of their total length; the NI
 * checks every piece (flush: -ERANGE, -EMSGSIZE).  Errors: -EINVAL (flags,
 * reply number, n), as netvm_unet_send.
 */
int netvm_unet_sendx(struct netvm_unet *u, int channel, const void *buf,
		     size_t len, unsigned int flags, unsigned int reply);
int netvm_unet_sendv(struct netvm_unet *u, int channel,
		     const struct netvm_unet_piece *pv, unsigned int n,
		     unsigned int flags, unsigned int reply);

/*
 * Reply buffers: before sending a request that carries reply number num,
 * arm entry num: the reply arriving on channel with that number and at
 * most len bytes is written by the NI at segment offset off (a hit); a
 * larger one, or one for an entry not armed, arrives the usual way (a
 * miss).  The NI disarms the entry at the first reply (one per arming).
 * The range is checked by the NI at use (outside the segment: a miss).
 * disarm returns 1 if the entry was still armed, 0 if a reply used it; a
 * reply the NI took just before may still land in the buffer.
 */
int netvm_unet_reply_arm(struct netvm_unet *u, unsigned int num, int channel,
			 uint32_t off, uint32_t len);
int netvm_unet_reply_disarm(struct netvm_unet *u, unsigned int num);

/*
 * The next message, as netvm_unet_recv, with what the DSM extensions add:
 * flags (NOINTR, REPLY, HIT), the reply number, and for a HIT the segment
 * offset it landed at; a HIT's bytes are NOT copied to buf (zero copy;
 * cap may be 0).  netvm_unet_recv copies a HIT's bytes like any message.
 * Diverted messages (docs/unet.md) keep NOINTR, REPLY and the number
 * (never HIT: a diverted reply does not use the reply table).
 */
struct netvm_unet_msg {
	size_t len;
	unsigned int channel;
	unsigned int flags;
	unsigned int reply;	/* REPLY: the reply number */
	uint32_t seg_off;	/* HIT: where the bytes are */
};
int netvm_unet_recvmsg(struct netvm_unet *u, void *buf, size_t cap,
		       struct netvm_unet_msg *m, int timeout_ms);

struct netvm_unet_dsm_stats {
	uint32_t quiet;		/* NOINTR messages received */
	uint32_t reply_hits;	/* replies written into their reply buffer */
	uint32_t reply_misses;	/* replies that took the free-buffer way */
	uint32_t events;	/* receive wakeups and upcalls the NI raised */
};
int netvm_unet_dsm_stats(struct netvm_unet *u, struct netvm_unet_dsm_stats *st);

/*
 * Tripwires (docs/tripwire.md): address-range triggers the NIC matches on
 * NetVM reads and writes.  A tripset is a group of tripwires waited on as
 * one (a range longer than a page needs one tripwire per page piece).
 *   netvm_trip_set:        watch [addr, +len) of this endpoint's own
 *                          exported memory for peers' accesses (flags:
 *                          NETVM_TRIP_READ and/or _WRITE, optionally
 *                          _ONCE); the new tripwires are added to *ts.
 *                          -ENOENT (not inside one export), -ENOSPC (the
 *                          NIC's NETVM_TRIP_MAX, or the tripset, is full).
 *   netvm_trip_set_remote: watch this endpoint's own accesses to segment
 *                          seg's [off, +len) (-ERANGE past its end).
 *   netvm_trip_clear:      remove every tripwire of *ts (ts->n becomes 0);
 *                          their hits not yet taken are dropped.
 *   netvm_trip_test:       hits of *ts not yet taken (no system call).
 *   netvm_trip_wait:       take the oldest hit of any tripwire of *ts,
 *                          waiting up to timeout_ms (< 0: for ever):
 *                          -ETIMEDOUT, -EINTR.
 * Hits arrive on the endpoint's notification queue and never appear in
 * netvm_notfq_*.  Thread safety: as the notification calls.
 */
#define NETVM_TRIP_READ		0x1	/* NVM_TW_READ */
#define NETVM_TRIP_WRITE	0x2	/* NVM_TW_WRITE */
#define NETVM_TRIP_ONCE		0x8	/* NVM_TW_ONCE: disarmed by one hit */
#define NETVM_TRIP_OUTGOING	0x4	/* in events: our own access */
#define NETVM_TRIP_MAX		4096	/* per NIC */
#define NETVM_TRIPSET_MAX	16

struct netvm_tripset {
	unsigned int n;
	uint32_t id[NETVM_TRIPSET_MAX];
};

struct netvm_trip_event {
	uint32_t id;		/* the tripwire */
	uint16_t node;		/* who accessed (outgoing: the target) */
	uint16_t port;
	uint32_t access;	/* NETVM_TRIP_READ/_WRITE, | _OUTGOING */
};

int netvm_trip_set(struct netvm *nv, const void *addr, size_t len,
		   unsigned int flags, struct netvm_tripset *ts);
int netvm_trip_set_remote(struct netvm *nv, int seg, uint64_t off,
			  size_t len, unsigned int flags,
			  struct netvm_tripset *ts);
int netvm_trip_clear(struct netvm *nv, struct netvm_tripset *ts);
int netvm_trip_test(struct netvm *nv, const struct netvm_tripset *ts);
int netvm_trip_wait(struct netvm *nv, const struct netvm_tripset *ts,
		    int timeout_ms, struct netvm_trip_event *ev);

/*
 * A message for a code returned by this library (0 or negative errno).
 * Never NULL; the string is static.
 */
const char *netvm_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* NETVM_LIB_H */
