# mk/process.mk - test wiring for container/process.c.
#
# process_apply_limits() writes oom_score_adj through os/procfs.c; until
# that module is in the tree, test_process carries its own minimal stand-in.
ifeq ($(wildcard os/procfs.c),)
$(BUILDDIR)/tests/test_process: CFLAGS += -DAGENTRT_TEST_FAKE_PROCFS
endif
