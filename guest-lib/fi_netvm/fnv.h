/* SPDX-License-Identifier: MIT */
/*
 * The netvm libfabric provider (docs/libfabric.md): datagram endpoints
 * (FI_EP_DGRAM, FI_MSG) over U-Net, and reliable ones (FI_EP_RDM, FI_MSG,
 * FI_TAGGED: fnv_rdm.h) on them, written against libfabric's public
 * headers only.  What the files share: the objects and the calls between
 * them.  One domain lock serialises every entry point (FI_THREAD_SAFE);
 * functions named *_locked expect it held.
 */
#ifndef FNV_H
#define FNV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include "fnv_nap.h"
#include "netvm.h"

#define FNV_NAME		"netvm"
#define FNV_VERSION		FI_VERSION(0, 1)
#define FNV_API			FI_VERSION(1, 17)
#define FNV_MSG_MAX		NETVM_UNET_MSG_MAX	/* one U-Net message */
#define FNV_IOV_MAX		4
#define FNV_TX_SIZE		64	/* U-Net's send queue */
#define FNV_RX_SIZE		256	/* posted receives per endpoint */
#define FNV_CQ_SIZE		1024	/* default completion queue entries */
#define FNV_CQ_EPS		16	/* endpoints one CQ can progress */
#define FNV_DOMAINS		4	/* /dev/netvm0 .. 3 */
#define FNV_SPIN_US		(-1)	/* FI_NETVM_SPIN_US (fnv_nap.c): never */
#define FNV_NAP_US		1000	/* FI_NETVM_NAP_US */
#define FNV_YIELD		32	/* FI_NETVM_YIELD (fnv_cq.c) */
/* FI_NETVM_RDV_READ_MAX: rendezvous messages up to this many bytes are
 * read into place, larger ones written (fnv_rdm_rdv.c, where the
 * crossing was measured) */
#define FNV_RDV_READ_MAX	(256 * 1024)

/*
 * Every netvm endpoint's any-source channel carries this tag plus its
 * port; a sender's channel to (node, port) carries the same, so the tag
 * names the receiving endpoint and the NI names the sender.  Several
 * endpoints of a node may each hold such a channel to the same (node,
 * port): U-Net's channels are per endpoint (docs/unet.md, "Tags").
 */
#define FNV_TAG(port)		(0x4e564600u | (port))	/* "NVF" + port */

/* The address of an endpoint (fi_getname, fi_av_insert): 8 bytes. */
#define FNV_ADDR_MAGIC		0x4e56u		/* "NV": a netvm address */
struct fnv_addr {
	uint16_t magic;
	uint16_t node;
	uint16_t port;
	uint16_t nic;		/* the device index: loop-back's namespace */
};

extern struct fi_provider fnv_prov;
/* every fid's tostr (fi_tostr FI_TYPE_FID): "netvm CLASS: ADDRESS" */
int fnv_tostr(const struct fid *fid, char *buf, size_t len);
/* FI_NETVM_SPIN_US (ns here; < 0: never nap) and FI_NETVM_NAP_US */
void fnv_nap_params(int64_t *spin_ns, int64_t *nap_us);
/* FI_NETVM_RDV_READ_MAX in bytes (negative: 0) */
size_t fnv_rdv_read_max_param(void);
unsigned int fnv_yield_param(void);

/* ---- fnv_info.c: what the provider offers, and matching hints ---- */
int fnv_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);
bool fnv_parse_addr(const char *s, struct fnv_addr *a);

/* ---- fnv_fabric.c: fabric, domain, event queue; fnv_mr.c: regions ---- */
struct fnv_fabric {
	struct fid_fabric fab;
};

#define FNV_IMPORTS	64	/* NetVM's imports per endpoint */
struct fnv_import {
	uint16_t node;
	uint64_t key;
	int seg;
};

struct fnv_domain {
	struct fid_domain dom;
	pthread_mutex_t lock;
	struct netvm *nv;
	int index;		/* /dev/netvm<index> */
	uint16_t node;
	int refs;		/* objects opened on it */
	bool prov_key;		/* FI_MR_PROV_KEY: regions are exports (RMA) */
	bool rdm;		/* opened for RDM endpoints: counters */
	/* fnv_nvm.c: the NetVM endpoint, for RMA and atomics */
	int nvm_port;		/* 0: not registered yet */
	void *bounce;
	struct fnv_import imports[FNV_IMPORTS];
	int nimports;
	struct fnv_rdv_cache *rdv_cache;	/* fnv_rdv_cache.c */
};
int fnv_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fab,
		    void *context);
extern struct fi_ops_mr fnv_mr_ops;

/* ---- fnv_av.c: address vectors (table and map) ---- */
struct fnv_av {
	struct fid_av av;
	struct fnv_domain *dom;
	enum fi_av_type type;
	size_t count, cap;
	struct fnv_addr *addr;	/* table: by index; map: as inserted */
	bool *used;
	int refs;		/* endpoints bound */
};
int fnv_av_open(struct fid_domain *d, struct fi_av_attr *attr,
		struct fid_av **av, void *context);
int fnv_av_resolve(const struct fnv_av *av, fi_addr_t fa,
		   struct fnv_addr *out);
fi_addr_t fnv_av_reverse(const struct fnv_av *av, uint16_t node,
			 uint16_t port);

/* ---- fnv_cq.c: completion queues ---- */
struct fnv_cqe {
	void *ctx;
	uint64_t flags;
	size_t len;
	void *buf;
	fi_addr_t src;
	int err;		/* positive FI_E* */
	size_t olen;		/* bytes cut off (FI_ETRUNC) */
	uint64_t tag, data;	/* FI_TAGGED, FI_REMOTE_CQ_DATA (RDM) */
};

struct fnv_ep;
struct fnv_cq {
	struct fid_cq cq;
	struct fnv_domain *dom;
	enum fi_cq_format format;
	enum fi_wait_obj wait;
	size_t size, head, n;
	struct fnv_cqe *ring;
	struct fnv_ep *eps[FNV_CQ_EPS];	/* bound: progressed by reads */
	int refs;
	struct fnv_nap nap;	/* reads of an empty queue (fnv_nap.c) */
	int64_t spin_ns;	/* FI_NETVM_SPIN_US: poll this long, then nap */
	int64_t nap_us;		/* FI_NETVM_NAP_US: a nap's longest sleep */
	uint64_t naps, naps_woken;	/* logged at close (FI_LOG_LEVEL=info) */
	unsigned int empties;	/* empty reads in a row */
	unsigned int yield_every;	/* FI_NETVM_YIELD: 0 never */
	uint64_t yields;	/* logged at close */
};
int fnv_cq_open(struct fid_domain *d, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
bool fnv_cq_room_locked(const struct fnv_cq *cq, size_t n);
void fnv_cq_push_locked(struct fnv_cq *cq, const struct fnv_cqe *e);
int fnv_cq_attach_locked(struct fnv_cq *cq, struct fnv_ep *ep);
void fnv_cq_detach_locked(struct fnv_cq *cq, struct fnv_ep *ep);

/* ---- fnv_cntr.c: counters ---- */
struct fnv_cntr {
	struct fid_cntr cntr;
	struct fnv_domain *dom;
	enum fi_wait_obj wait;
	uint64_t value, err;
	struct fnv_ep *eps[FNV_CQ_EPS];	/* bound: progressed by reads */
	int refs;
};
int fnv_cntr_open(struct fid_domain *d, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context);
/* One operation done (err 0) or failed, on c (NULL: none bound). */
void fnv_cntr_count_locked(struct fnv_cntr *c, int err);
int fnv_cntr_attach_locked(struct fnv_cntr *c, struct fnv_ep *ep);
void fnv_cntr_detach_locked(struct fnv_cntr *c, struct fnv_ep *ep);

/* ---- fnv_wire.c: U-Net below an endpoint, loop-back beside it ---- */
#define FNV_CHANS		(NVM_UNET_CHANNELS - 1)	/* one is any-source */
struct fnv_chan {
	int id;			/* U-Net channel, -1: none */
	uint16_t node, port;
	uint64_t used;		/* last use, for replacement */
};

struct fnv_wire {
	struct netvm_unet *u;
	uint16_t node, port, nic;
	int any;		/* the any-source channel */
	int lo_fd;		/* loop-back datagram socket */
	struct fnv_chan ch[FNV_CHANS];
	uint64_t clock;
	unsigned int unet_run;	/* U-Net messages taken in a row */
	bool lo_talks;		/* the loop-back was used: ask it every time */
	unsigned int lo_idle;	/* empty looks since the loop-back's last */
	bool lo_lossy;		/* a full loop-back socket drops (RDM resends) */
	uint64_t lo_dropped;	/* loop-back sends nobody took */
	uint8_t big[FNV_MSG_MAX];	/* a message larger than its buffer */
};
int fnv_wire_open(struct fnv_wire *w, struct fnv_domain *dom);
void fnv_wire_close(struct fnv_wire *w);
int fnv_wire_send(struct fnv_wire *w, const struct fnv_addr *to,
		  const void *buf, size_t len);
/* The next message into buf (cap bytes): its length (it may be more than
 * cap: then cap bytes were kept), -FI_EAGAIN if none. */
ssize_t fnv_wire_recv(struct fnv_wire *w, void *buf, size_t cap,
		      uint16_t *node, uint16_t *port);
/* Arm the wakeups and give the descriptors to sleep on: 1 if a message
 * is there already. */
int fnv_wire_arm(struct fnv_wire *w, int fds[2]);

/* ---- fnv_ep.c, fnv_msg.c: endpoints and their data path ---- */
/* fnv_iov.c: the bytes of n pieces (SIZE_MAX if they overflow a
 * size_t); n bytes of src into iov from byte pos of it on (what does not
 * fit is left out). */
size_t fnv_iov_total(const struct iovec *iov, size_t n);
void fnv_iov_scatter(const struct iovec *iov, size_t count, size_t pos,
		     const void *src, size_t n);
struct fnv_rx {
	void *ctx;
	struct iovec iov[FNV_IOV_MAX];
	size_t iov_count;
	uint64_t flags;		/* FI_COMPLETION */
};

struct fnv_rdm;
struct fnv_ep {
	struct fid_ep ep;
	struct fnv_domain *dom;
	struct fnv_rdm *rdm;	/* FI_EP_RDM (fnv_rdm.h); NULL: FI_EP_DGRAM */
	struct fnv_av *av;
	struct fnv_cq *tx_cq, *rx_cq;
	bool tx_selective, rx_selective;	/* FI_SELECTIVE_COMPLETION */
	/* counters bound for FI_SEND, FI_RECV, FI_READ, FI_WRITE */
	struct fnv_cntr *cntr_send, *cntr_recv, *cntr_read, *cntr_write;
	uint64_t tx_op_flags, rx_op_flags;
	bool enabled;
	bool directed;		/* FI_DIRECTED_RECV asked for: receives name
				 * their sender (else src_addr is ignored) */
	struct fnv_wire w;
	struct fnv_rx rx[FNV_RX_SIZE];
	size_t rx_head, rx_n;
	uint8_t bounce[FNV_MSG_MAX];
};
int fnv_ep_open(struct fid_domain *d, struct fi_info *info,
		struct fid_ep **ep, void *context);
extern struct fi_ops_msg fnv_msg_ops;
void fnv_ep_progress_locked(struct fnv_ep *ep);

/*
 * ---- fnv_none.c: the calls the provider does not offer: -FI_ENOSYS ----
 * Every member of every ops table is set (docs/libfabric.md).
 */
int fnv_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int fnv_no_control(struct fid *fid, int command, void *arg);
int fnv_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context);
int fnv_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		   void *ops, void *context);
int fnv_no_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_pep **pep, void *context);
int fnv_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		     struct fid_wait **waitset);
int fnv_no_trywait(struct fid_fabric *fabric, struct fid **fids, int count);
int fnv_no_scalable_ep(struct fid_domain *domain, struct fi_info *info,
		       struct fid_ep **sep, void *context);
int fnv_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		     struct fid_poll **pollset);
int fnv_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
		   struct fid_stx **stx, void *context);
int fnv_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
		   struct fid_ep **rx_ep, void *context);
int fnv_no_query_collective(struct fid_domain *domain,
			    enum fi_collective_op coll,
			    struct fi_collective_attr *attr, uint64_t flags);
int fnv_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		  struct fid_ep **tx_ep, void *context);
int fnv_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		  struct fid_ep **rx_ep, void *context);
int fnv_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int fnv_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		   size_t paramlen);
int fnv_no_listen(struct fid_pep *pep);
int fnv_no_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int fnv_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		  size_t paramlen);
int fnv_no_shutdown(struct fid_ep *ep, uint64_t flags);
int fnv_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		struct fid_mc **mc, void *context);
int fnv_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		  struct fid_av_set **av_set, void *context);

/* ---- fnv_none_ops.c: an endpoint's RMA, tagged, atomic, collective ----
 * operations, all -FI_ENOSYS (the tables are set, never NULL) */
extern struct fi_ops_rma fnv_no_rma_ops;
extern struct fi_ops_tagged fnv_no_tagged_ops;
/* fnv_rma.c, fnv_atomic.c: RDM endpoints' RMA and atomics on NetVM */
extern struct fi_ops_rma fnv_rma_ops;
extern struct fi_ops_atomic fnv_atomic_ops;
int fnv_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags);
extern struct fi_ops_atomic fnv_no_atomic_ops;
extern struct fi_ops_collective fnv_no_collective_ops;

/* errno (negative) to a libfabric error (positive), for completions */
int fnv_errno_to_fi(int err);

#endif
