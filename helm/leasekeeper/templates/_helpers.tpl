{{/* The chart's name, shortened to the 63 characters Kubernetes allows in a label. */}}
{{- define "leasekeeper.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's objects' name. */}}
{{- define "leasekeeper.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "leasekeeper.selectorLabels" -}}
app.kubernetes.io/name: {{ include "leasekeeper.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "leasekeeper.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "leasekeeper.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "leasekeeper.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "leasekeeper.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The service's configuration file: the leasekeeper.* settings and the pool size. */}}
{{- define "leasekeeper.config" -}}
spring:
  datasource:
    hikari:
      maximum-pool-size: {{ .Values.database.maximumPoolSize }}
leasekeeper:
{{ toYaml .Values.leasekeeper | indent 2 }}
{{- end }}
