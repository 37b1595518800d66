{{/* Name of the chart's objects: the release name, with the chart name unless it already holds it. */}}
{{- define "tidemark.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "tidemark.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The headless Service that gives every pod a stable DNS name. */}}
{{- define "tidemark.headless" -}}
{{- printf "%s-headless" (include "tidemark.fullname" .) -}}
{{- end -}}

{{- define "tidemark.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tidemark.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "tidemark.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "tidemark.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "tidemark.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tidemark.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Stable DNS suffix of the pods: <pod>.<this>. */}}
{{- define "tidemark.podDomain" -}}
{{- printf "%s.%s.svc.%s" (include "tidemark.headless" .) .Release.Namespace .Values.clusterDomain -}}
{{- end -}}

{{/* How many pods are controller voters: controller.voters, at most replicas. */}}
{{- define "tidemark.voterCount" -}}
{{- $voters := int .Values.controller.voters -}}
{{- $replicas := int .Values.replicas -}}
{{- if lt $replicas 1 -}}{{- fail "replicas must be at least 1" -}}{{- end -}}
{{- if lt $voters 1 -}}{{- fail "controller.voters must be at least 1" -}}{{- end -}}
{{- min $voters $replicas -}}
{{- end -}}

{{/* controller.voters: id@<pod address>:<controller port> for pods 0 .. voterCount-1. */}}
{{- define "tidemark.controllerVoters" -}}
{{- $fullname := include "tidemark.fullname" . -}}
{{- $domain := include "tidemark.podDomain" . -}}
{{- $port := int .Values.ports.controller -}}
{{- $voters := list -}}
{{- range $i := until (int (include "tidemark.voterCount" .)) -}}
{{- $voters = append $voters (printf "%d@%s-%d.%s:%d" $i $fullname $i $domain $port) -}}
{{- end -}}
{{- join "," $voters -}}
{{- end -}}

{{/* The Secret holding the S3 credentials, or nothing when the default credentials chain is used. */}}
{{- define "tidemark.s3SecretName" -}}
{{- if .Values.s3.existingSecret -}}
{{- .Values.s3.existingSecret -}}
{{- else if .Values.s3.accessKey -}}
{{- printf "%s-s3" (include "tidemark.fullname" .) -}}
{{- end -}}
{{- end -}}
