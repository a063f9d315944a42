#!/bin/sh
# Usage: compare.sh [-L]. Compares what nproc-dump prints for every
# process (every thread with -L) with /proc/PID/stat, statm, status and
# wchan (/proc/PID/task/TID/... with -L), and prints the tasks that
# differ. Fields that change while a task runs (faults, times, state,
# processor, rss, wchan) may differ for the tasks that ran between the two
# reads; this shell is skipped.
P=
[ "$1" = -L ] && P=task
F=tgid,tid,state,ppid,pgid,sid,tty_nr,tpgid,flags,min_flt,cmin_flt,maj_flt,cmaj_flt,utime,stime,cutime,cstime,priority,nice,nr_threads,start_time,vsize,rss,rsslim,exit_signal,processor,rt_priority,policy,shared,text,data,uid,euid,gid,egid,comm,wchan
T=$(mktemp); trap 'rm -f "$T"' EXIT
nproc-dump "$@" $F > "$T"
n=0; bad=0
while read -r line; do
  pid=${line#tgid=}; pid=${pid%% *}
  tid=${line#* tid=}; tid=${tid%% *}
  [ "$pid" = "$$" ] && continue   # this shell ran between the reads
  d=/proc/$pid
  [ -n "$P" ] && d=/proc/$pid/task/$tid
  [ -r $d/stat ] || continue
  st=$(cat $d/stat); comm=${st#*(}; comm=${comm%)*}; rest=${st##*) }
  set -- $rest
  # stat fields 3.. are $1..: state ppid pgid sid tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime prio nice nthr 0 start vsize rss rsslim ...
  want="tgid=$pid tid=${st%% *} state=$(printf '%d' "'$1") ppid=$2 pgid=$3 sid=$4 tty_nr=$5 tpgid=$6 flags=$7 min_flt=$8 cmin_flt=$9 maj_flt=${10} cmaj_flt=${11} utime=${12} stime=${13} cutime=${14} cstime=${15} priority=${16} nice=${17} nr_threads=${18} start_time=${20} vsize=${21} rss=${22} rsslim=${23} exit_signal=${36} processor=${37} rt_priority=${38} policy=${39}"
  set -- $(cat $d/statm)
  want="$want shared=$3 text=$4 data=$6"
  set -- $(grep Uid: $d/status); want="$want uid=$2 euid=$3"
  set -- $(grep Gid: $d/status); want="$want gid=$2 egid=$3"
  want="$want comm=$comm wchan=$(cat $d/wchan)"
  n=$((n+1))
  a=$(echo "$line" | tr ' ' '\n' | sort | tr '\n' ' ')
  b=$(echo "$want" | tr ' ' '\n' | sort | tr '\n' ' ')
  if [ "$a" != "$b" ]; then
    bad=$((bad+1))
    echo "DIFF pid $pid"; echo " nproc: $line"; echo " /proc: $want"
  fi
done < "$T"
echo "compared $n processes, $bad differ"
