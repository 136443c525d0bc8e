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

{{/*
An audience check, or none said explicitly (contract 1.1, "Tokens"): jwt.audiences is required unless
leasekeeper.security.audienceCheck is false, and must be empty then, as the service itself requires.
*/}}
{{- define "leasekeeper.requireAudiences" -}}
{{- if and .Values.leasekeeper.security.audienceCheck (not .Values.jwt.audiences) }}
{{- fail "jwt.audiences is required: the audiences a token must name in `aud` to be accepted, e.g. --set 'jwt.audiences={leasekeeper}'. To accept tokens of any audience, tokens issued for other APIs included, set leasekeeper.security.audienceCheck=false instead." }}
{{- end }}
{{- if and (not .Values.leasekeeper.security.audienceCheck) .Values.jwt.audiences }}
{{- fail "jwt.audiences is set, yet leasekeeper.security.audienceCheck is false: remove the audiences to accept tokens of any audience, or switch the check on." }}
{{- end }}
{{- end }}

{{/* The service's configuration file: the leasekeeper.* settings, the pool size and the token audiences. */}}
{{- define "leasekeeper.config" -}}
{{- include "leasekeeper.requireAudiences" . }}
spring:
  datasource:
    hikari:
      maximum-pool-size: {{ .Values.database.maximumPoolSize }}
  {{- with .Values.jwt.audiences }}
  security:
    oauth2:
      resourceserver:
        jwt:
          audiences:
            {{- toYaml . | nindent 12 }}
  {{- end }}
leasekeeper:
{{ toYaml .Values.leasekeeper | indent 2 }}
{{- end }}
