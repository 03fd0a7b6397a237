/* Instructions per translation block, against the QEMU 7.2 TCG plugin API (v1), for
 * .ci/firmware-profile.sh: at exit, one line "tb <start address> <instructions> <runs>" per
 * block translated. The script adds them up per function (the function holding each
 * block's start), which says where an operation's instructions go.
 *
 * Build:  gcc -shared -fPIC -O2 -o libtbprofile.so qemu-tbprofile.c
 * Use:    qemu-system-arm ... -plugin ./libtbprofile.so -d plugin -kernel FIRMWARE.elf
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t, void *);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, qemu_plugin_vcpu_tb_trans_cb_t);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *, enum qemu_plugin_op, void *, uint64_t);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, qemu_plugin_udata_cb_t, void *);
void qemu_plugin_outs(const char *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One per translation (a block translated twice has two: the script adds them). */
struct block {
    uint64_t vaddr, insns, runs;
    struct block *next;
};
static struct block *blocks;

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    struct block *b = calloc(1, sizeof *b);
    if (!b) return;
    b->vaddr = qemu_plugin_tb_vaddr(tb);
    b->insns = qemu_plugin_tb_n_insns(tb);
    b->next = blocks;
    blocks = b;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->runs, 1);
}

static void at_exit(qemu_plugin_id_t id, void *p) {
    char buf[96];
    for (struct block *b = blocks; b; b = b->next) {
        if (!b->runs) continue;
        snprintf(buf, sizeof buf, "tb %" PRIx64 " %" PRIu64 " %" PRIu64 "\n", b->vaddr, b->insns, b->runs);
        qemu_plugin_outs(buf);
    }
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
