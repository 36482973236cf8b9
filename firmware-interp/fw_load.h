/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Checks of a struct fw that came from outside (a migration stream, a
 * saved cluster file): every index, count, enum and SRAM offset the
 * firmware later uses without checking again.  Each module checks its
 * own tables; *what names the first check that failed.
 */
#ifndef NETVM_FW_LOAD_H
#define NETVM_FW_LOAD_H

#include <stdbool.h>

struct fw;

bool fw_state_ok(const struct fw *fw, const char **what);
bool fw_queues_state_ok(const struct fw *fw, const char **what);
bool fw_nv_state_ok(const struct fw *fw, const char **what);
bool fw_tw_state_ok(const struct fw *fw, const char **what);
bool fw_unet_state_ok(const struct fw *fw, const char **what);

struct fw_nv_op;
bool fw_nv_op_state_ok(const struct fw *fw, const struct fw_nv_op *op,
		       const char **what);

/* A failed check: record its text for the caller and refuse. */
#define FW_LOAD_CHECK(cond)						\
	do {								\
		if (!(cond)) {						\
			*what = #cond;					\
			return false;					\
		}							\
	} while (0)

#endif
