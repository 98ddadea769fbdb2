#!/usr/bin/env bash
# grader/src's folders are layers: each folder's README.md says, on its
# "May include:" line, which other folders its files may include. This test
# reads every #include "folder/..." in every file and fails on one that
# reaches a folder its README does not allow (a part reaching up), and on a
# folder with no README or no such line.
#   layers_test.sh SOURCE_DIR
set -uo pipefail
src="$1/grader/src"
fail=0
for dir in "$src"/*/; do
  part=$(basename "$dir")
  readme="$dir/README.md"
  if [ ! -f "$readme" ]; then
    echo "grader/src/$part has no README.md saying its job and what it may include"
    fail=1
    continue
  fi
  allowed=$(sed -n 's/^May include: *//p' "$readme" | head -1)
  if [ -z "$allowed" ]; then
    echo "grader/src/$part/README.md has no 'May include:' line"
    fail=1
    continue
  fi
  allowed=" $(echo "$allowed" | tr ',' ' ' | tr -s ' ') $part "
  while IFS=: read -r file line text; do
    target=$(echo "$text" | sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p')
    [ -z "$target" ] && continue
    [ -d "$src/$target" ] || continue  # reports/, gradlab/: libraries outside the grader's parts
    case "$allowed" in
      *" $target "*) ;;
      *) echo "grader/src/$part/$(basename "$file"):$line includes $target/, which $part/README.md does not allow (May include:$allowed)"
         fail=1 ;;
    esac
  done < <(grep -n '^#include "' "$dir"*.h "$dir"*.cpp 2>/dev/null)
done
# Every file lives in a part: nothing is left loose at the top.
loose=$(find "$src" -maxdepth 1 -type f \( -name '*.h' -o -name '*.cpp' \) | sort)
if [ -n "$loose" ]; then
  echo "files outside grader/src's parts: $loose"
  fail=1
fi
[ "$fail" = 0 ] && echo "grader/src: $(ls -d "$src"/*/ | wc -l) parts, every include within what each part's README allows"
exit "$fail"
