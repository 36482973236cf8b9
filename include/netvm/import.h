/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Import over the network: the messages two nodes' kernels (netvm.ko,
 * netvm_import.c) exchange for NETVM_IOC_IMPORT.  docs/driver.md,
 * "Import over the network".
 *
 * Every message is a raw frame (NVM_PKT_RAW) whose payload is exactly one
 * struct nvm_imp_msg, starting with NVM_IMP_MAGIC.  Big-endian, like
 * everything on the wire (netvm/packet.h, netvm/mapper.h).  The last byte
 * of the magic is the format's version: a kernel ignores (passes on to raw
 * readers) a message of another version.
 */
#ifndef NETVM_IMPORT_H
#define NETVM_IMPORT_H

#include "abi_types.h"
#include "netvm_uapi.h"		/* NETVM_EXPORT_NAME_LEN, NETVM_EXPORT_RO */

#define NVM_IMP_MAGIC		"NVMKCTL\2"	/* 8 bytes, no NUL after */
#define NVM_IMP_MAGIC_LEN	8

enum nvm_imp_type {
	NVM_IMP_REQ = 1,	/* node src asks node dst for (port, name) */
	NVM_IMP_REPLY = 2,	/* dst's answer, fields below */
};

struct nvm_imp_msg {
	uint8_t magic[NVM_IMP_MAGIC_LEN];
	uint32_t type;		/* enum nvm_imp_type */
	uint32_t id;		/* requester's number, echoed */
	uint16_t src_node;	/* the sender of this message */
	uint16_t dst_node;	/* REQ: the node asked; REPLY: the requester */
	uint16_t port;		/* the exporting endpoint, echoed */
	uint16_t reserved0;
	uint32_t status;	/* REPLY: 0 or a positive errno */
	uint32_t flags;		/* REPLY: NETVM_EXPORT_RO */
	uint32_t pt_rows;	/* REPLY: the exporter's page-table rows */
	uint32_t reserved1;
	uint64_t addr;		/* REPLY: the export's address ... */
	uint64_t len;		/* ... and length, as exported */
	uint64_t key;		/* REPLY: its protection key */
	char name[NETVM_EXPORT_NAME_LEN];	/* the export's name */
};
NVM_ABI_ASSERT(sizeof(struct nvm_imp_msg) == 96, "import message size");

#endif /* NETVM_IMPORT_H */
