# What the GPU check scripts share (gpu_checks.sh, gpu_charlm_checks.sh source it): sections
# chosen on the command line, and steps bounded in time whose output goes to one log.
# The sourcing script sets `sections` (" a b c ") and `log` first. After the steps, `summary`
# holds one line per step and `status` is 1 when any step failed.
summary=()
status=0
want() { [[ "$sections" == *" $1 "* ]]; }  # want SECTION: was it asked for
note() { summary+=("$*"); echo "== $*" | tee -a "$log"; }
step() {  # step NAME SECONDS COMMAND...: runs it bounded, appends its output to the log
  local name="$1" seconds="$2"; shift 2
  echo "---- $name: $*" >> "$log"
  local begin=$SECONDS
  timeout -k 5 "$seconds" "$@" >> "$log" 2>&1
  local rc=$?
  note "$name: exit $rc in $((SECONDS - begin)) s"
  (( rc == 0 )) || status=1
  return $rc
}
