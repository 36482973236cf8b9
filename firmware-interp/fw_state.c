// SPDX-License-Identifier: GPL-2.0-only
/*
 * The firmware's state machines, in one place: each state's name and the
 * transitions each machine has.  Every transition goes through a
 * set_state function, which checks it against the machine's table and
 * emits a typed trace event naming both states (fw_state, fw_op_state,
 * fw_pend_state, fw_unet_ep_state, fw_unet_tx_state); a transition the
 * table lacks is traced as fw_bad_transition and still made, so that
 * tracing never changes what the firmware does.  The unit tests' chip fails on fw_bad_transition.
 */
#include "fw.h"

#define TO(st)	(1u << (st))

#define FW_STATES	(NVM_FW_FAULT + 1)	/* enum nvm_fw_state */

static const char *const fw_state_names[FW_STATES] = {
	[NVM_FW_HALTED] = "halted",
	[NVM_FW_BOOTING] = "booting",
	[NVM_FW_READY] = "ready",
	[NVM_FW_FAULT] = "fault",
};

/* Not this firmware's: FAULT (the device's, on an internal error). */
static const uint32_t fw_state_next[FW_STATES] = {
	[NVM_FW_HALTED] = TO(NVM_FW_BOOTING),
	[NVM_FW_BOOTING] = TO(NVM_FW_READY),
	[NVM_FW_READY] = TO(NVM_FW_HALTED),
};

const char *const fw_tx_state_names[FW_TX_STATE_COUNT] = {
	[FW_TX_IDLE] = "idle",
	[FW_TX_FETCH] = "fetch",
	[FW_TX_SEND] = "send",
};

/* A refused descriptor completes from IDLE; halt stops any transmit. */
static const uint32_t tx_state_next[FW_TX_STATE_COUNT] = {
	[FW_TX_IDLE] = TO(FW_TX_IDLE) | TO(FW_TX_FETCH),
	[FW_TX_FETCH] = TO(FW_TX_SEND) | TO(FW_TX_IDLE),
	[FW_TX_SEND] = TO(FW_TX_IDLE),
};

const char *const fw_op_state_names[FW_OP_STATE_COUNT] = {
	[FW_OP_FREE] = "free",
	[FW_OP_NEW] = "new",
	[FW_OP_MISS] = "miss",
	[FW_OP_FETCH] = "fetch",
	[FW_OP_READY] = "ready",
	[FW_OP_SENT] = "sent",
	[FW_OP_DELIVER] = "deliver",
	[FW_OP_DELIVERING] = "delivering",
};

/* Any taken operation may complete (FREE): an error, a timeout, a peer
 * lost, its endpoint closed. */
static const uint32_t op_state_next[FW_OP_STATE_COUNT] = {
	[FW_OP_FREE] = TO(FW_OP_NEW),
	[FW_OP_NEW] = TO(FW_OP_MISS) | TO(FW_OP_FETCH) | TO(FW_OP_READY) |
		      TO(FW_OP_FREE),
	[FW_OP_MISS] = TO(FW_OP_NEW) | TO(FW_OP_DELIVER) | TO(FW_OP_FREE),
	[FW_OP_FETCH] = TO(FW_OP_READY) | TO(FW_OP_FREE),
	[FW_OP_READY] = TO(FW_OP_SENT) | TO(FW_OP_FREE),
	[FW_OP_SENT] = TO(FW_OP_DELIVER) | TO(FW_OP_FREE),
	[FW_OP_DELIVER] = TO(FW_OP_MISS) | TO(FW_OP_DELIVERING) |
			  TO(FW_OP_FREE),
	[FW_OP_DELIVERING] = TO(FW_OP_FREE),
};

const char *const fw_pend_state_names[FW_PEND_STATE_COUNT] = {
	[FW_PEND_FREE] = "free",
	[FW_PEND_NEW] = "new",
	[FW_PEND_MISS] = "miss",
	[FW_PEND_BUSY] = "busy",
	[FW_PEND_RESPOND] = "respond",
	[FW_PEND_BOUNCED] = "bounced",
};

/* A peer lost or restarted frees what is owed to it, DMA apart. */
static const uint32_t pend_state_next[FW_PEND_STATE_COUNT] = {
	[FW_PEND_FREE] = TO(FW_PEND_NEW) | TO(FW_PEND_BUSY) |
			 TO(FW_PEND_RESPOND),
	[FW_PEND_NEW] = TO(FW_PEND_MISS) | TO(FW_PEND_BUSY) |
			TO(FW_PEND_RESPOND) | TO(FW_PEND_FREE),
	[FW_PEND_MISS] = TO(FW_PEND_NEW) | TO(FW_PEND_FREE),
	[FW_PEND_BUSY] = TO(FW_PEND_RESPOND) | TO(FW_PEND_BOUNCED) |
			 TO(FW_PEND_FREE),
	[FW_PEND_RESPOND] = TO(FW_PEND_FREE),
	[FW_PEND_BOUNCED] = TO(FW_PEND_RESPOND) | TO(FW_PEND_FREE),
};

const char *const fw_unet_ep_state_names[FW_UNET_EP_STATE_COUNT] = {
	[FW_UNET_EP_CLOSED] = "closed",
	[FW_UNET_EP_DIRECT] = "direct",
	[FW_UNET_EP_DIVERT] = "divert",
	[FW_UNET_EP_HELD] = "held",
};

/* A hold ends (back to DIVERT) before DIRECT or closing takes effect. */
static const uint32_t unet_ep_state_next[FW_UNET_EP_STATE_COUNT] = {
	[FW_UNET_EP_CLOSED] = TO(FW_UNET_EP_DIRECT),
	[FW_UNET_EP_DIRECT] = TO(FW_UNET_EP_DIVERT) | TO(FW_UNET_EP_CLOSED),
	[FW_UNET_EP_DIVERT] = TO(FW_UNET_EP_HELD) | TO(FW_UNET_EP_DIRECT) |
			      TO(FW_UNET_EP_CLOSED),
	[FW_UNET_EP_HELD] = TO(FW_UNET_EP_DIVERT),
};

const char *const fw_unet_tx_state_names[FW_UNET_TX_STATE_COUNT] = {
	[FW_UNET_TX_READY] = "ready",
	[FW_UNET_TX_PAGE_WAIT] = "page_wait",
	[FW_UNET_TX_RETRY] = "retry",
};

/* RESTART for page 0 (the kernel lost events) retries uncounted: READY;
 * closing drops a wait or a retry. */
static const uint32_t unet_tx_state_next[FW_UNET_TX_STATE_COUNT] = {
	[FW_UNET_TX_READY] = TO(FW_UNET_TX_PAGE_WAIT),
	[FW_UNET_TX_PAGE_WAIT] = TO(FW_UNET_TX_RETRY) | TO(FW_UNET_TX_READY),
	[FW_UNET_TX_RETRY] = TO(FW_UNET_TX_READY),
};

struct fw_machine {
	const char *name;
	uint32_t count;
	const char *const *names;
	const uint32_t *next;	/* next[from]: a bit per state it may go to */
};

static const struct fw_machine machines[] = {
	{ "firmware", FW_STATES, fw_state_names, fw_state_next },
	{ "raw_tx", FW_TX_STATE_COUNT, fw_tx_state_names, tx_state_next },
	{ "nv_op", FW_OP_STATE_COUNT, fw_op_state_names, op_state_next },
	{ "nv_pend", FW_PEND_STATE_COUNT, fw_pend_state_names,
	  pend_state_next },
	{ "unet_ep", FW_UNET_EP_STATE_COUNT, fw_unet_ep_state_names,
	  unet_ep_state_next },
	{ "unet_tx", FW_UNET_TX_STATE_COUNT, fw_unet_tx_state_names,
	  unet_tx_state_next },
};

enum { M_FW, M_TX, M_OP, M_PEND, M_UNET_EP, M_UNET_TX };

static const char *state_name(const struct fw_machine *m, uint32_t st)
{
	return st < m->count ? m->names[st] : "?";
}

/* Checks @from -> @to; false (traced) if the machine has no such edge. */
static bool transition_ok(struct fw *fw, const struct fw_machine *m,
			  uint32_t from, uint32_t to)
{
	if (from < m->count && to < m->count && (m->next[from] & TO(to)))
		return true;
	fw_tr_fw_bad_transition(fw, m->name, state_name(m, from),
				state_name(m, to));
	return false;
}

void fw_set_fw_state(struct fw *fw, enum nvm_fw_state to)
{
	const struct fw_machine *m = &machines[M_FW];

	if (transition_ok(fw, m, fw->state, to))
		fw_tr_fw_state(fw, m->name, state_name(m, fw->state),
			       state_name(m, to));
	fw->state = to;
}

void fw_raw_set_tx_state(struct fw *fw, enum fw_tx_state to)
{
	const struct fw_machine *m = &machines[M_TX];

	if (transition_ok(fw, m, fw->tx_state, to))
		fw_tr_fw_state(fw, m->name, state_name(m, fw->tx_state),
			       state_name(m, to));
	fw->tx_state = to;
}

void fw_nv_op_set_state(struct fw *fw, struct fw_nv_op *op,
			enum fw_op_state to)
{
	const struct fw_machine *m = &machines[M_OP];
	/* which endpoint's queue slot: op is one of fw->nv.ep[].ops[] */
	uint32_t ep = (uint32_t)(((const char *)op - (const char *)fw->nv.ep) /
				 sizeof(fw->nv.ep[0]));
	uint32_t idx = (uint32_t)(op - fw->nv.ep[ep].ops);

	if (transition_ok(fw, m, op->state, to))
		fw_tr_fw_op_state(fw, fw_nv_req_id(ep, idx, op->cmd.seq),
				  state_name(m, op->state), state_name(m, to));
	op->state = to;
}

void fw_nv_pend_set_state(struct fw *fw, struct fw_nv_pending *pd,
			  enum fw_pend_state to)
{
	const struct fw_machine *m = &machines[M_PEND];

	if (transition_ok(fw, m, pd->state, to))
		fw_tr_fw_pend_state(fw, (uint32_t)(pd - fw->nv.pending),
				    state_name(m, pd->state),
				    state_name(m, to));
	pd->state = to;
}

void fw_unet_ep_set_state(struct fw *fw, uint32_t port,
			  enum fw_unet_ep_state to)
{
	const struct fw_machine *m = &machines[M_UNET_EP];
	struct fw_unet_ep *e = &fw->unet.ep[port];

	if (transition_ok(fw, m, e->state, to))
		fw_tr_fw_unet_ep_state(fw, port, state_name(m, e->state),
				       state_name(m, to));
	e->state = to;
}

void fw_unet_tx_set_state(struct fw *fw, uint32_t port,
			  enum fw_unet_tx_state to)
{
	const struct fw_machine *m = &machines[M_UNET_TX];
	struct fw_unet_ep *e = &fw->unet.ep[port];

	if (transition_ok(fw, m, e->tx_state, to))
		fw_tr_fw_unet_tx_state(fw, port, state_name(m, e->tx_state),
				       state_name(m, to));
	e->tx_state = to;
}
