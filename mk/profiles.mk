# mk/profiles.mk - the built-in `agent-strict` profile is contrib/profiles/agent-strict.json,
# embedded into the runtime library as the NUL-terminated array agentrt_agent_strict_json[]
# (profile/builtin.c), so the example file and the built-in cannot drift apart.
# mk files are read before the Makefile's `all`: keep it the default goal.
profiles_saved_goal := $(.DEFAULT_GOAL)

$(BUILDDIR)/profiles/agent_strict_json.c: contrib/profiles/agent-strict.json mk/profiles.mk
	@mkdir -p $(dir $@)
	{ echo '/* generated from contrib/profiles/agent-strict.json by mk/profiles.mk - do not edit */'; \
	  echo 'const char agentrt_agent_strict_json[] = {'; \
	  od -An -v -tx1 $< | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00};'; } > $@.tmp
	mv $@.tmp $@

$(BUILDDIR)/agent_strict_json.o: $(BUILDDIR)/profiles/agent_strict_json.c
	$(CC) $(CFLAGS) -c -o $@ $<

EXTRA_OBJS += $(BUILDDIR)/agent_strict_json.o

# The profile fuzzer compiles profile/*.c itself: it needs the embedded text too.
FUZZ_SRCS_profile += $(BUILDDIR)/profiles/agent_strict_json.c
.DEFAULT_GOAL := $(profiles_saved_goal)
