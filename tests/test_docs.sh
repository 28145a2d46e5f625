#!/bin/sh
# tests/test_docs.sh - every public declaration of pool.h carries its own
# documentation block, right above it.
#
#  - Each function declared with POOL_DEF: a comment that ends on the line
#    just above the declaration, begins "/* <name>:" and has the lines
#    "Errors:", "Threads:" and "Blocks:" (what it returns on failure, from
#    which threads it may be called, what it may block on).
#    Each label must be followed by text, and every POOL_DEF in the public
#    part must start its line (so that none escapes the check).
#  - Each public struct (`struct pool_<name> {`, also after `typedef`): a
#    comment just above it that begins "/* pool_<name>:".
# Only the public part is read: up to the end of its include guard.
#  - The CONTENTS list of the top block names every section of the
#    implementation by its grep tag (">>name"), in file order, and each
#    section's header carries its tag.
#  - README's API reference has a row for every public function, and its
#    configuration table one for every field of pool_config: README
#    summarises what pool.h says in full, and must not miss a name.
#  - Every public function is called in an example: a program of examples/
#    or a C block of README, which make examples and make readme run.
#
# Run from the repository root; run.sh runs it as part of `make test`.
awk '
    /^#endif \/\* POOL_H \*\// { exit }   # the implementation follows
    # The comment that ends on the line just above a declaration is its block.
    /^\/\*/ { text = ""; open = 1 }
    open { text = text "\n" $0 }
    open && /\*\/[ \t]*$/ { open = 0; ended = NR; block = text; next }
    /^POOL_DEF / {
        name = $0
        sub(/\(.*/, "", name)
        sub(/.*[ *]/, "", name)
        functions++
        if (ended != NR - 1 || index(block, "/* " name ":") != 2) {
            print "pool.h:" NR ": " name " has no block of its own right above it"
            bad++
            next
        }
        n = split("Errors: Threads: Blocks:", labels, " ")
        for (i = 1; i <= n; i++)
            if (block !~ ("\n   " labels[i] " +[^ */]")) {
                print "pool.h:" NR ": " name "'"'"'s block has no \"" labels[i] "\" line"
                bad++
            }
    }
    /^(typedef )?struct pool_[a-z0-9][a-z0-9_]*( \{|$)/ {
        name = $0
        sub(/^(typedef )?struct /, "", name)
        sub(/[ {].*/, "", name)
        structs++
        if (ended != NR - 1 || index(block, "/* " name ":") != 2) {
            print "pool.h:" NR ": struct " name " has no block of its own right above it"
            bad++
        }
    }
    !open && /POOL_DEF/ && !/^POOL_DEF / && !/^#/ {
        print "pool.h:" NR ": a POOL_DEF declaration that does not start its line: " $0
        bad++
    }
    END {
        if (functions < 20 || structs < 5) {
            print "test_docs: read only " functions " functions and " structs " structs from pool.h"
            exit 1
        }
        print "test_docs: " functions " public functions and " structs " public structs, " (bad + 0) " without their documentation"
        exit bad > 0
    }
' pool.h
rc_blocks=$?

# The contents list (indented tags in the top block) against the sections'
# tags (at the end of a header line), in order.
listed=$(sed -n '1,/^\*\//s/^     >>\([a-z-]*\) .*/\1/p' pool.h)
headed=$(sed -n 's/^\/\* .* >>\([a-z-]*\) \*\/$/\1/p' pool.h)
if [ -z "$listed" ] || [ "$listed" != "$headed" ]; then
    echo "test_docs: the CONTENTS list and the sections' tags differ:"
    echo "  listed: $(echo $listed)"
    echo "  headed: $(echo $headed)"
    exit 1
fi
echo "test_docs: $(echo "$headed" | wc -l) sections, each listed in CONTENTS in file order"

# README's reference: a row per public function, a row per config field.
public=$(sed -n '1,/^#endif \/\* POOL_H \*\//s/^POOL_DEF [^(]*[ *]\([a-z_0-9]*\)(.*/\1/p' pool.h)
fields=$(sed -n '/^struct pool_config {/,/^};/p' pool.h | grep '^    [a-z]' |
    sed 's/(\*\([a-z_0-9]*\)).*/\1/; s/;.*//; s/.*[ *]//')
reference=$(sed -n '/^## API reference/,/^### Bad input/p' README.md)
missing=0
for f in $public; do
    echo "$reference" | grep -q "^| \`[^|]*[ *]$f(" && continue
    echo "test_docs: README's API reference has no row for $f"
    missing=$((missing + 1))
done
for f in $fields; do
    echo "$reference" | grep -q "^| [^|]*\`$f\`" && continue
    echo "test_docs: README's configuration table has no row for pool_config.$f"
    missing=$((missing + 1))
done
if [ "$(echo $public | wc -w)" -lt 20 ] || [ "$(echo $fields | wc -w)" -lt 12 ]; then
    echo "test_docs: read only $(echo $public | wc -w) functions and $(echo $fields | wc -w) fields"
    exit 1
fi
echo "test_docs: README lists $(echo $public | wc -w) functions and $(echo $fields | wc -w) pool_config fields, $missing missing"

# An example for every public function: a call in a program of examples/
# (make examples builds and runs each) or in a C block of README (make
# readme does). A call is the name followed by "(": one named in a comment
# that way passes too.
readme_c=$(awk '/^```c$/ { on = 1; next } /^```/ { on = 0 } on' README.md)
unshown=0
for f in $public; do
    cat examples/*.c | grep -qE "(^|[^a-z_0-9])$f\(" && continue
    printf '%s\n' "$readme_c" | grep -qE "(^|[^a-z_0-9])$f\(" && continue
    echo "test_docs: no program in examples/ or README calls $f"
    unshown=$((unshown + 1))
done
echo "test_docs: $unshown public functions without an example"
[ $missing = 0 ] && [ $unshown = 0 ] || exit 1
exit $rc_blocks
