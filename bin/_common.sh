# shellcheck shell=bash
# Shared helpers for Strata's scripts. Source it, do not run it:
#   . "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
# Callers are expected to use `set -euo pipefail`; every function here returns non-zero on failure.

# Name of the dedicated account used when we are root (OpenSearch and its test framework refuse root).
STRATA_SYSTEM_USER=strata
STRATA_SYSTEM_HOME=/home/strata

strata_die() {
  echo "strata: error: $*" >&2
  exit 1
}

strata_log() {
  echo "strata: $*" >&2
}

# Prints the major version of the JDK at $1 (e.g. 25, 17, 8), or nothing if it is not a JDK.
_strata_java_major() {
  local jdk=$1 line ver
  [[ -x "$jdk/bin/java" ]] || return 0
  # `java -version` writes e.g.: openjdk version "25.0.1" 2025-10-21   (or "1.8.0_412" for Java 8)
  line=$("$jdk/bin/java" -version 2>&1 | grep -m1 -E 'version "' || true)
  ver=${line#*version \"}
  ver=${ver%%\"*}
  [[ -n "$ver" && "$ver" != "$line" ]] || return 0
  [[ "$ver" == 1.* ]] && ver=${ver#1.}
  ver=${ver%%[.+-]*}
  [[ "$ver" =~ ^[0-9]+$ ]] && echo "$ver"
  return 0
}

# Sets and exports JAVA_HOME to a JDK >= 21 (OpenSearch 3.x needs 21; the default java 17 is too old).
# An existing JAVA_HOME wins if it is new enough; otherwise the newest JDK >= 21 under /usr/lib/jvm.
strata_find_java() {
  local min=21 major best="" best_major=0 jdk
  if [[ -n "${JAVA_HOME:-}" ]]; then
    major=$(_strata_java_major "$JAVA_HOME")
    if [[ -n "$major" && "$major" -ge "$min" ]]; then
      export JAVA_HOME
      return 0
    fi
    strata_log "ignoring JAVA_HOME=$JAVA_HOME (java ${major:-?} < $min)"
  fi
  for jdk in /usr/lib/jvm/*; do
    [[ -d "$jdk" && ! -L "$jdk" ]] || continue # skip aliases such as java-1.17.0-openjdk-amd64
    [[ -x "$jdk/bin/javac" ]] || continue      # a JDK, not a bare JRE (Maven compiles with it)
    major=$(_strata_java_major "$jdk")
    if [[ -n "$major" && "$major" -ge "$min" && "$major" -gt "$best_major" ]]; then
      best=$jdk
      best_major=$major
    fi
  done
  [[ -n "$best" ]] || strata_die "no JDK >= $min found (JAVA_HOME unset or too old, nothing suitable in /usr/lib/jvm/*); install one, e.g. a Temurin JDK 25, and/or set JAVA_HOME"
  export JAVA_HOME=$best
}

# Prints the user that nodes and tests run as: ourselves, or the dedicated `strata` user when root.
strata_node_user() {
  if [[ $(id -u) -ne 0 ]]; then
    id -un
    return 0
  fi
  if ! id -u "$STRATA_SYSTEM_USER" >/dev/null 2>&1; then
    useradd --system --create-home --home-dir "$STRATA_SYSTEM_HOME" --shell /bin/bash "$STRATA_SYSTEM_USER" >&2 \
      || strata_die "could not create user $STRATA_SYSTEM_USER"
  fi
  echo "$STRATA_SYSTEM_USER"
}

# Runs CMD... as the node user. As root, goes through runuser with a clean, explicit environment:
# JAVA_HOME/PATH/HOME plus the variables our scripts and OpenSearch read (STRATA_*, OPENSEARCH_*, ...).
strata_as_user() {
  [[ $# -gt 0 ]] || strata_die "strata_as_user: no command"
  if [[ $(id -u) -ne 0 ]]; then
    "$@"
    return
  fi
  local user name path=$PATH
  user=$(strata_node_user)
  [[ -n "${JAVA_HOME:-}" ]] && path="$JAVA_HOME/bin:$PATH"
  local -a envs=("HOME=$STRATA_SYSTEM_HOME" "USER=$user" "LOGNAME=$user" "PATH=$path")
  [[ -n "${JAVA_HOME:-}" ]] && envs+=("JAVA_HOME=$JAVA_HOME")
  for name in $(compgen -e); do
    case "$name" in
      STRATA_* | OPENSEARCH_* | MAVEN_OPTS | MAVEN_ARGS | JAVA_TOOL_OPTIONS | CI | TERM | LANG | LC_* | TZ | DJL_*)
        envs+=("$name=${!name}") ;;
    esac
  done
  runuser -u "$user" -- env -i "${envs[@]}" "$@"
}

# strata_fetch G:A:V[:type[:classifier]] DESTDIR
# Copies one artifact from Maven Central (through Maven and its local repository) into DESTDIR,
# unless DESTDIR already has it. Prints the path of the file.
strata_fetch() {
  [[ $# -eq 2 ]] || strata_die "usage: strata_fetch G:A:V[:type[:classifier]] DESTDIR"
  local coords=$1 dest=$2 g a v type classifier file
  IFS=: read -r g a v type classifier <<<"$coords"
  [[ -n "$g" && -n "$a" && -n "$v" ]] || strata_die "strata_fetch: bad coordinates '$coords'"
  type=${type:-jar}
  file="$a-$v${classifier:+-$classifier}.$type"
  mkdir -p "$dest"
  if [[ ! -s "$dest/$file" ]]; then
    command -v mvn >/dev/null || strata_die "mvn not found (needed to fetch $coords)"
    strata_log "fetching $coords"
    # Run from a neutral folder so Maven does not pick up (and depend on) a project pom.xml.
    # Maven's output (incl. JDK 25's harmless sun.misc.Unsafe warnings) is shown only on failure.
    local out
    if ! out=$(cd "$dest" && mvn -q -B \
      org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
      -Dartifact="$g:$a:$v:$type${classifier:+:$classifier}" \
      -DoutputDirectory="$dest" 2>&1); then
      echo "$out" >&2
      strata_die "could not fetch $coords from Maven Central"
    fi
    [[ -s "$dest/$file" ]] || strata_die "fetched $coords but $dest/$file is missing"
  fi
  echo "$dest/$file"
}

# strata_fetch_all DESTDIR G:A:V[:type[:classifier]]... : copies the artifacts DESTDIR does not have yet into it, with
# one Maven run (one JVM start per artifact was most of the time it took to assemble a distribution).
strata_fetch_all() {
  local dest=$1 coords g a v type classifier tmp out
  shift
  local -a items=()
  mkdir -p "$dest"
  for coords in "$@"; do
    IFS=: read -r g a v type classifier <<<"$coords"
    [[ -n "$g" && -n "$a" && -n "$v" ]] || strata_die "strata_fetch_all: bad coordinates '$coords'"
    type=${type:-jar}
    [[ -s "$dest/$a-$v${classifier:+-$classifier}.$type" ]] && continue
    items+=("<artifactItem><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version><type>$type</type>${classifier:+<classifier>$classifier</classifier>}</artifactItem>")
  done
  [[ ${#items[@]} -gt 0 ]] || return 0
  command -v mvn >/dev/null || strata_die "mvn not found (needed to fetch $*)"
  strata_log "fetching ${#items[@]} artifact(s)"
  tmp=$(mktemp -d)
  cat >"$tmp/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>io.strata.fetch</groupId><artifactId>fetch</artifactId><version>0</version><packaging>pom</packaging>
  <build><plugins><plugin>
    <groupId>org.apache.maven.plugins</groupId><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version>
    <configuration><outputDirectory>$dest</outputDirectory><artifactItems>${items[*]}</artifactItems></configuration>
  </plugin></plugins></build>
</project>
POM
  if ! out=$(cd "$tmp" && mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy 2>&1); then
    echo "$out" >&2
    rm -rf "$tmp"
    strata_die "could not fetch from Maven Central: $*"
  fi
  rm -rf "$tmp"
}

# The checkout these scripts belong to (its pom.xml names the default OpenSearch version).
STRATA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Prints the OpenSearch version to build for and run: STRATA_OPENSEARCH when set, else the pom's <opensearch.version>.
strata_opensearch_version() {
  local v=${STRATA_OPENSEARCH:-}
  if [[ -z "$v" ]]; then
    v=$(sed -n 's:.*<opensearch.version>\([^<]*\)</opensearch.version>.*:\1:p' "$STRATA_ROOT/pom.xml" | head -n 1)
  fi
  strata_check_opensearch_version "$v"
  echo "$v"
}

# Dies unless $1 is an OpenSearch version of the form 3.5.0.
strata_check_opensearch_version() {
  [[ "$1" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] \
    || strata_die "OpenSearch version [$1] (--opensearch or STRATA_OPENSEARCH) must look like 3.5.0"
}

# strata_plugin_zip V: prints the path of the Strata zip for OpenSearch V (target/releases/strata-*-osV.zip), building it
# first (mvn package -DskipTests -Dopensearch.version=V) when it is missing or older than the sources.
strata_plugin_zip() {
  local v=$1 zip
  zip=$(ls "$STRATA_ROOT"/target/releases/strata-*-os"$v".zip 2>/dev/null | head -n 1 || true)
  if [[ -z "$zip" || -n "$(cd "$STRATA_ROOT" && find pom.xml plugin-descriptor.properties plugin-security.policy config src/main src/assembly -newer "$zip" -print -quit)" ]]; then
    strata_log "building the plugin zip for OpenSearch $v"
    (cd "$STRATA_ROOT" && mvn -B -ntp -q package -DskipTests -Dopensearch.version="$v") >&2 \
      || strata_die "could not build the plugin zip for OpenSearch $v"
    zip=$(ls "$STRATA_ROOT"/target/releases/strata-*-os"$v".zip | head -n 1)
  fi
  echo "$zip"
}
